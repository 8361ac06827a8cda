// Run counts by workflow, version and status (countRuns: the inspector's runs list, list_workflows, metrics,
// the pruner) are read from the runs_counts index alone: on a million runs a scan of the table's rows took
// 1.4 s, the covering index about 100 ms (bench scenario g). The plan is checked, not the time.

import { describe, expect, it } from "vitest";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { prepareStatements } from "../../src/storage/sqlite/statements.js";
import { onCleanup, tempDb } from "../helpers.js";

/** A store holding `n` runs: run i of workflow wf-(i % 3), version 1 + (i % 2), key ki, `status(i)`; analysed. */
function storeWithRuns(n: number, status: (i: number) => string) {
  const store = openSqliteStore(tempDb());
  onCleanup(() => store.close());
  const db = store.db;
  const insert =
    db.prepare(`INSERT INTO runs (workflow, key, version, status, initial_state, state, created_at, updated_at)
      VALUES (?, ?, ?, ?, '{}', '{}', ?, ?)`);
  db.transaction(() => {
    for (let i = 0; i < n; i++) insert.run(`wf-${i % 3}`, `k${i}`, 1 + (i % 2), status(i), i, i);
  })();
  db.exec("ANALYZE");
  return { store, db };
}

describe("countRuns reads a covering index", () => {
  it("on SQLite: EXPLAIN QUERY PLAN scans runs_counts only, with no sort for the grouping", async () => {
    const { store, db } = storeWithRuns(300, (i) => ["completed", "failed", "running"][i % 3]!);
    const sql = prepareStatements(db).countRuns.source;
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map(
      (r) => r.detail,
    );
    expect(plan).toEqual(["SCAN runs USING COVERING INDEX runs_counts"]);
    const counts = await store.countRuns();
    expect(counts.reduce((a, c) => a + c.count, 0)).toBe(300);
    expect(counts.find((c) => c.workflow === "wf-1" && c.version === 2 && c.status === "failed")?.count).toBe(
      50,
    );
  });
});

describe("liveVersions seeks the unfinished runs", () => {
  it("on SQLite: EXPLAIN QUERY PLAN searches runs_status_created by status, no scan; counts and keys are right", async () => {
    const { store, db } = storeWithRuns(3000, (i) => (i % 100 === 0 ? "waiting" : "completed"));
    const sql = prepareStatements(db).liveVersions.source;
    const plan = (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all() as Array<{ detail: string }>).map(
      (r) => r.detail,
    );
    expect(
      plan.some((d) => d.startsWith("SCAN runs")),
      plan.join(" | "),
    ).toBe(false);
    expect(plan.join(" | ")).toContain("USING INDEX runs_status_created (status=?)");
    const live = await store.liveVersions();
    // i % 100 === 0 → i even, so version 1; workflows by i % 3.
    expect(live.map((l) => [l.workflow, l.version, l.count]).sort()).toEqual([
      ["wf-0", 1, 10],
      ["wf-1", 1, 10],
      ["wf-2", 1, 10],
    ]);
    expect(live.find((l) => l.workflow === "wf-0")!.keys.slice(0, 2)).toEqual(["k0", "k300"]);
  });
});
