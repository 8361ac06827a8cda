// planReplay on plain rows, without a database: what is discarded, reopened, kept, restored and run again.

import { describe, expect, it } from "vitest";
import { planReplay, replayVersion } from "../../src/engine/replay-plan.js";
import type { MessageRow } from "../../src/storage/store.js";
import { entryRows, runRow } from "./rows.js";

function message(id: number, consumedBy: number | null): MessageRow {
  return {
    id,
    runId: 1,
    queue: "approvals",
    body: JSON.stringify({ id }),
    sentAt: id * 10,
    idempotencyKey: null,
    consumedAt: consumedBy === null ? null : id * 10 + 1,
    consumedBy,
  };
}

describe("planReplay", () => {
  it("retries the failed step by default and puts back nothing else", () => {
    const entry = entryRows();
    const rows = [
      entry("", 0, "load", "step", "completed", {
        stateSeq: 1,
        stateDiff: JSON.stringify({ "/n": { after: 1 } }),
      }),
      entry("", 1, "pay", "step", "failed"),
    ];
    const p = planReplay({ run: runRow({ state: '{"n":1}' }), entries: rows, messages: [], version: 2 });
    expect(p.plan.from).toEqual({ id: 2, path: "pay" });
    expect(p.plan.discard).toEqual([{ id: 2, path: "pay", kind: "step", status: "failed" }]);
    expect(p.plan.rerun).toEqual([{ id: 2, path: "pay", status: "failed", attempts: 1 }]);
    expect(p.plan.version).toEqual({ from: 1, to: 2 });
    expect(p.kept.map((r) => r.name)).toEqual(["load"]);
    expect(JSON.parse(p.state)).toEqual({ n: 1 });
    expect(p.nextSeq).toBe(3);
  });

  it("from an earlier step: reverts its state, puts its messages back in order, lists the steps that run again", () => {
    const entry = entryRows();
    const rows = [
      entry("", 0, "load", "step", "completed", {
        stateSeq: 1,
        stateDiff: JSON.stringify({ "/a": { after: 1 } }),
      }),
      entry("", 1, "wait", "queue", "completed"),
      entry("", 2, "record", "step", "completed", {
        stateSeq: 2,
        stateDiff: JSON.stringify({ "/b": { after: 2 } }),
      }),
      entry("", 3, "pay", "step", "failed"),
      entry("~replay", 0, "replay-1", "replay", "completed"),
    ];
    const p = planReplay({
      run: runRow({ state: '{"a":1,"b":2}' }),
      entries: rows,
      messages: [message(9, 2), message(4, 2), message(12, null)],
      fromStep: "wait",
      version: 1,
    });
    expect(p.plan.discard.map((d) => d.path)).toEqual(["wait", "record", "pay"]);
    expect(p.plan.rerun.map((d) => `${d.path}:${d.status}`)).toEqual(["record:completed", "pay:failed"]);
    expect(p.plan.restoreMessages.map((m) => m.id)).toEqual([4, 9]);
    expect(p.plan.restoreState).toEqual({ a: 1 });
    expect(p.kept.map((r) => r.name)).toEqual(["load", "replay-1"]);
    expect(p.markers).toBe(1);
  });

  it("inside a join branch: reopens the join, keeps the sibling's earlier entries, discards its later ones", () => {
    const entry = entryRows();
    const join = entry("", 0, "j", "join", "failed", { detail: JSON.stringify({ branches: ["a", "b"] }) });
    const rows = [
      join,
      entry("j[a]", 0, "a1", "step", "completed"),
      entry("j[b]", 0, "b1", "step", "failed"),
      entry("j[a]", 1, "a2", "step", "completed"),
    ];
    const p = planReplay({ run: runRow(), entries: rows, messages: [], version: 1 });
    expect(p.plan.from?.path).toBe("j[b]/b1");
    expect(p.plan.reopen).toEqual([{ id: 1, path: "j", kind: "join" }]);
    expect(p.plan.discard.map((d) => d.path)).toEqual(["j[b]/b1", "j[a]/a2"]);
    const reopened = p.kept.find((r) => r.name === "j")!;
    expect(reopened).toMatchObject({ status: "running", error: null, endedAt: null });
    expect(join.status).toBe("failed"); // the rows given are not changed
  });

  it("inside a loop: restarts the loop at that iteration with the state it began with", () => {
    const entry = entryRows();
    const loop = entry("", 0, "l", "loop", "failed", {
      detail: JSON.stringify({ iteration: 3, state: 30, starts: { "1": 10, "2": 20 } }),
    });
    const rows = [loop, entry("l#1", 0, "s", "step", "completed"), entry("l#2", 0, "s", "step", "failed")];
    const p = planReplay({ run: runRow(), entries: rows, messages: [], version: 1 });
    expect(p.plan.from?.path).toBe("l#2/s");
    expect(JSON.parse(p.reopened[0]!.detail!)).toMatchObject({ iteration: 2, state: 20 });
  });

  it("a cancelled run resumes from the entry the cancel cut short; a waiting run needs fromStep", () => {
    const entry = entryRows();
    const rows = [entry("", 0, "a", "step", "completed"), entry("", 1, "b", "step", "cancelled")];
    expect(
      planReplay({ run: runRow({ status: "cancelled" }), entries: rows, messages: [], version: 1 }).plan.from,
    ).toEqual({
      id: 2,
      path: "b",
    });
    expect(() =>
      planReplay({ run: runRow({ status: "waiting" }), entries: rows, messages: [], version: 1 }),
    ).toThrow(/Run "wf\/k" is waiting; there is no failed step to retry. Pass fromStep/);
  });

  it("refuses an entry that does not exist, naming the root entries; a diverged run needs fromStep", () => {
    const entry = entryRows();
    const rows = [entry("", 0, "a", "step", "completed")];
    expect(() =>
      planReplay({ run: runRow(), entries: rows, messages: [], fromStep: "nope", version: 1 }),
    ).toThrow(/has no entry "nope" to replay from. Its root entries are: a\./);
    const diverged = runRow({
      error: JSON.stringify({
        name: "HistoryDivergedError",
        code: "HISTORY_DIVERGED",
        message: "x",
        details: { replayFrom: "a" },
      }),
    });
    expect(() => planReplay({ run: diverged, entries: rows, messages: [], version: 1 })).toThrow(
      /Replay it with fromStep "a"/,
    );
  });

  it("replayVersion takes the latest known, or the one asked for if registered", () => {
    expect(replayVersion(runRow(), [1, 3, 2], undefined)).toBe(3);
    expect(replayVersion(runRow({ version: 4 }), [], undefined)).toBe(4);
    expect(() => replayVersion(runRow(), [1, 2], 5)).toThrow(
      /has no version 5; registered versions are 1, 2/,
    );
  });
});
