// loadRuns({ packed: true }): the root's leading plain steps come as PackedSteps, and read back (entryAt, then
// the entries) they are what the eager load answers, whatever the outputs hold; anything else is not packed.

import { describe, expect, it } from "vitest";
import type { SqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { EntryRow, LoadedRun } from "../../src/storage/store.js";
import { BACKENDS, batch } from "./backends.js";
import { createRun, entry, T0 } from "./fixtures.js";

/** What replay reads of an entry (all a completed step is loaded with). */
function replayFields(e: EntryRow) {
  const { runId, seq, scope, ordinal, name, kind, status, output, detail, stateSeq, stateDiff } = e;
  return { runId, seq, scope, ordinal, name, kind, status, output, detail, stateSeq, stateDiff };
}

/** A packed load's history as rows: the packed steps (as entryAt builds them), then the entries. */
function unpacked(l: LoadedRun): ReturnType<typeof replayFields>[] {
  const p = l.packed;
  const head = p ? Array.from({ length: p.count }, (_, i) => p.entryAt(i)) : [];
  return [...head, ...l.entries].map(replayFields);
}

const OUTPUTS = [
  JSON.stringify({ q: 'say "hi"', b: "back\\slash", e: "🎉 ünï", sep: "\u0001\u001f" }),
  JSON.stringify(""),
  JSON.stringify(null),
  null,
  JSON.stringify([1, "a,b", { "": 0 }]),
  JSON.stringify(-0.5e-300),
  JSON.stringify("x".repeat(1000)),
];

const sqlite = BACKENDS.find((b) => b.name === "sqlite")!;

describe("SQLite store: packed loads", () => {
  async function loadBoth(rows: EntryRow[], build?: (runId: number) => EntryRow[]) {
    const store = await (await sqlite.fresh()).open();
    const run = await createRun(store, `r${Math.random()}`, { owner: "me" });
    const written = build ? build(run.id) : rows.map((r) => ({ ...r, runId: run.id }));
    await store.commit(batch(T0, { entries: written, leases: [{ runId: run.id, owner: "me" }] }));
    const [eager] = await store.loadRuns([run.id]);
    const [packed] = await store.loadRuns([run.id], { packed: true });
    return { store, written, eager: eager!, packed: packed! };
  }

  it("packs a long root sequence across ranges, outputs of every kind read back exactly", async () => {
    const rows: EntryRow[] = [];
    for (let seq = 1; seq <= 9000; seq++)
      rows.push(entry(0, seq, { name: `s${seq}-ü"\\`, output: OUTPUTS[seq % OUTPUTS.length]! }));
    // The step in flight after them, as a resumed run has.
    rows.push(entry(0, 9001, { status: "running", output: null, attempts: '[{"n":1,"startedAt":1}]' }));
    const { eager, packed, written } = await loadBoth(rows);
    expect(packed.packed?.count).toBe(9000);
    expect(packed.entries.map((e) => e.seq)).toEqual([9001]);
    expect(unpacked(packed)).toEqual(eager.entries.map(replayFields));
    expect(unpacked(packed)).toEqual(written.map(replayFields));
    // Output JSON text as stored; "" stands for none only inside the pack.
    expect(packed.packed!.output(0)).toBe(OUTPUTS[1]);
    expect(packed.packed!.output(2)).toBe(null);
    expect(packed.packed!.name(8999)).toBe('s9000-ü"\\');
    expect(() => packed.packed!.entryAt(9000)).toThrow(RangeError);
  });

  it("packs only the prefix before the first other entry; the rest come as entries", async () => {
    const rows: EntryRow[] = [];
    for (let seq = 1; seq <= 5000; seq++) rows.push(entry(0, seq));
    rows[4199] = entry(0, 4200, { kind: "sleep", status: "completed", detail: '{"until":5}', output: null });
    const { eager, packed } = await loadBoth(rows);
    expect(packed.packed?.count).toBe(4096);
    expect(packed.entries[0]!.seq).toBe(4097);
    expect(unpacked(packed)).toEqual(eager.entries.map(replayFields));
  });

  it("does not pack what the separators could not keep apart, nor steps outside the root or out of place", async () => {
    const cases: Array<(runId: number) => EntryRow[]> = [
      // A stored output holding the separator (not JSON.stringify's text, but stored text is what is read).
      (id) => [1, 2, 3].map((seq) => entry(id, seq, { output: seq === 2 ? '"a\u0001b"' : "1" })),
      // A stored name holding it.
      (id) => [1, 2, 3].map((seq) => entry(id, seq, { name: seq === 2 ? "a\u0001b" : `s${seq}` })),
      // An empty output (not JSON: the pack's "" means none).
      (id) => [1, 2, 3].map((seq) => entry(id, seq, { output: seq === 3 ? "" : "1" })),
      // A first step in a branch scope.
      (id) => [1, 2].map((seq) => entry(id, seq, { scope: seq === 1 ? "j[a]" : "", ordinal: 0 })),
      // Seqs with a gap at the start (a bounded loop's deleted iterations).
      (id) => [2, 3].map((seq) => entry(id, seq, { ordinal: seq - 2 })),
    ];
    for (const build of cases) {
      const { eager, packed } = await loadBoth([], build);
      expect(packed.packed).toBeUndefined();
      expect(packed.entries.map(replayFields)).toEqual(eager.entries.map(replayFields));
    }
  });

  it("reads the prefix by the primary key, in seq order (no ORDER BY there)", async () => {
    const store = (await (await sqlite.fresh()).open()) as unknown as SqliteStore;
    const stmts = (store as unknown as { stmts: { replayPrefix: { source: string } } }).stmts;
    const plan = store.db.prepare(`EXPLAIN QUERY PLAN ${stmts.replayPrefix.source}`).all(1, 0, 10) as Array<{
      detail: string;
    }>;
    expect(plan.map((p) => p.detail)).toEqual([
      "SEARCH entries USING PRIMARY KEY (run_id=? AND seq>? AND seq<?)",
    ]);
  });
});
