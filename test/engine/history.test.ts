import { describe, expect, it } from "vitest";
import { HistoryIndex, Scope } from "../../src/engine/history.js";
import type { EntryRow } from "../../src/storage/store.js";

function row(seq: number, scope: string, ordinal: number, stateSeq: number | null = null): EntryRow {
  return {
    runId: 1,
    seq,
    scope,
    ordinal,
    name: `e${seq}`,
    kind: "step",
    status: "completed",
    startedAt: null,
    endedAt: null,
    input: null,
    output: null,
    error: null,
    attempts: null,
    detail: null,
    stateSeq,
    stateDiff: null,
  };
}

/** Every (scope, ordinal) the index answers, as seqs. */
function layout(index: HistoryIndex, scopes: string[]) {
  return Object.fromEntries(scopes.map((s) => [s, Array.from(index.scope(s), (e) => e?.seq ?? null)]));
}

describe("HistoryIndex", () => {
  it("a history of root entries in order is indexed at each ordinal, with its highest seq and state seq", () => {
    const rows = [row(1, "", 0), row(2, "", 1, 1), row(5, "", 2), row(6, "", 3, 2)];
    const index = new HistoryIndex(rows);
    expect(layout(index, [""])).toEqual({ "": [1, 2, 5, 6] });
    expect([index.maxSeq, index.maxStateSeq]).toEqual([6, 2]);
    expect(index.all().map((e) => e.seq)).toEqual([1, 2, 5, 6]);
  });

  it("root entries that do not sit at their index (a gap, nested scopes) are placed by scope and ordinal", () => {
    const gap = new HistoryIndex([row(1, "", 0), row(2, "", 2), row(3, "", 3)]);
    expect(layout(gap, [""])).toEqual({ "": [1, null, 2, 3] });
    const nested = new HistoryIndex([row(1, "", 0), row(2, "j[a]", 0), row(3, "", 1), row(4, "j[a]", 1, 7)]);
    expect(layout(nested, ["", "j[a]"])).toEqual({ "": [1, 3], "j[a]": [2, 4] });
    expect([nested.maxSeq, nested.maxStateSeq]).toEqual([4, 7]);
    const late = new HistoryIndex([row(1, "", 0), row(2, "", 1), row(3, "l#1", 0)]);
    expect(layout(late, ["", "l#1"])).toEqual({ "": [1, 2], "l#1": [3] });
  });

  it("an empty history has empty scopes and no seq yet", () => {
    const index = new HistoryIndex([]);
    expect(layout(index, [""])).toEqual({ "": [] });
    expect([index.maxSeq, index.maxStateSeq]).toEqual([0, 0]);
  });
});

describe("Scope.useName", () => {
  it("refuses a name used before in the scope, among few names and among many", () => {
    const scope = new Scope("", [], null);
    for (let i = 0; i < 40; i++) {
      expect(scope.useName(`n${i}`, i)).toBe(true);
      // Every name used so far is refused again, whether the scope holds them in its list or its Set.
      for (let j = 0; j <= i; j += 7) expect(scope.useName(`n${j}`, i + 1)).toBe(false);
      expect(scope.useName(`n${i}`, i + 1)).toBe(false);
    }
  });
});
