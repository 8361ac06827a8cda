// The entry union's derived facts: which kinds hold scopes or wait, the scopes a container holds, and how a
// replay reopens a container and the entries its outcome cancelled. Pure functions over rows, no database.

import { describe, expect, it } from "vitest";
import {
  childScopes,
  ENTRY_KINDS,
  type Entry,
  type EntryKind,
  isContainer,
  isMarker,
  isWait,
  reopenedContainer,
  reopenedStatus,
  traitsOf,
} from "../../src/engine/entries.js";

function entry(kind: EntryKind, fields: Partial<Entry> = {}): Entry {
  return {
    runId: 1,
    seq: 1,
    scope: "",
    ordinal: 0,
    name: "e",
    kind,
    status: "completed",
    startedAt: 1,
    endedAt: 2,
    input: null,
    output: null,
    error: null,
    attempts: null,
    detail: null,
    stateSeq: null,
    stateDiff: null,
    ...fields,
  } as Entry;
}

describe("entry kinds", () => {
  it("derives containers, waits and markers from one table, and knows nothing of a kind it has not got", () => {
    const traits = Object.fromEntries(
      ENTRY_KINDS.map((k) => [k, [isContainer(k), isWait(k), isMarker(k)].map(Number).join("")]),
    );
    expect(traits).toEqual({
      step: "000",
      sleep: "010",
      queue: "010",
      join: "100",
      race: "100",
      loop: "100",
      version: "001",
      replay: "001",
      child: "010",
      checkpoint: "001",
      rollback: "000",
    });
    // A row written by a newer version (or a name from Object.prototype) is none of these, and does not throw.
    for (const k of ["compensation", "toString", "__proto__"]) {
      expect(traitsOf(k)).toBeUndefined();
      expect([isContainer(k), isWait(k), isMarker(k)]).toEqual([false, false, false]);
    }
  });

  it("names the scopes a container holds: branches in order, a loop's iterations from the first kept one", () => {
    expect(childScopes(entry("join", { name: "notify", detail: '{"branches":["mail","chat"]}' }))).toEqual([
      "notify[mail]",
      "notify[chat]",
    ]);
    expect(
      childScopes(entry("race", { scope: "a[x]", name: "r", detail: '{"branches":["p"],"winner":"p"}' })),
    ).toEqual(["a[x]/r[p]"]);
    const loop = entry("loop", {
      name: "agent",
      detail: JSON.stringify({
        iteration: 4,
        state: {},
        compacted: { diff: {}, stateSeq: 3, iterations: 2 },
      }),
    });
    expect(childScopes(loop)).toEqual(["agent#2", "agent#3", "agent#4"]);
    expect(childScopes(entry("loop", { name: "fresh" }))).toEqual([]);
    for (const k of ["step", "sleep", "queue", "version", "replay"] as const)
      expect(childScopes(entry(k))).toEqual([]);
  });

  it("puts a cancelled entry back the way it was in progress: waits waiting, a step between attempts retrying", () => {
    expect(reopenedStatus(entry("sleep", { status: "cancelled" }))).toBe("waiting");
    expect(reopenedStatus(entry("queue", { status: "cancelled" }))).toBe("waiting");
    const retrying = JSON.stringify([{ n: 1, startedAt: 1, endedAt: 2, status: "failed", retryAt: 9 }]);
    expect(reopenedStatus(entry("step", { status: "cancelled", attempts: retrying }))).toBe("retrying");
    const stopped = JSON.stringify([{ n: 1, startedAt: 1, endedAt: 2, status: "cancelled" }]);
    expect(reopenedStatus(entry("step", { status: "cancelled", attempts: stopped }))).toBe("running");
    expect(reopenedStatus(entry("join", { status: "cancelled" }))).toBe("running");
  });

  it("reopens a container for a replay: outcome cleared, a loop back at the target's iteration, a race without its winner", () => {
    const loop = entry("loop", {
      name: "agent",
      status: "completed",
      output: '"done"',
      endedAt: 50,
      detail: JSON.stringify({ iteration: 3, state: { n: 3 }, starts: { "1": { n: 1 }, "2": { n: 2 } } }),
    });
    const target = entry("step", { scope: "agent#1", name: "think" });
    const reopened = reopenedContainer(loop, target);
    expect(reopened).toMatchObject({ status: "running", output: null, endedAt: null, error: null });
    expect(JSON.parse(reopened.detail!)).toMatchObject({ iteration: 1, state: { n: 1 } });
    expect(loop.status).toBe("completed"); // the row read is left as it was

    const race = entry("race", {
      name: "r",
      detail: '{"branches":["a","b"],"winner":"a"}',
      status: "failed",
    });
    expect(JSON.parse(reopenedContainer(race, entry("step", { scope: "r[b]" })).detail!)).toEqual({
      branches: ["a", "b"],
    });
    const join = entry("join", { name: "j", detail: '{"branches":["a"]}', output: '{"a":1}' });
    expect(reopenedContainer(join, entry("step", { scope: "j[a]" }))).toMatchObject({
      status: "running",
      output: null,
      detail: '{"branches":["a"]}',
    });
  });
});
