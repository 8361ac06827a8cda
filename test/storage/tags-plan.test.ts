// A tag filter over 100,000 runs is answered from the run_tags_find index: the query plan (EXPLAIN QUERY PLAN
// on SQLite, EXPLAIN on PostgreSQL) reads the tag's index range newest first and looks each run up by its
// key, with no scan of runs and no sort, and the pages it returns are the right ones. The rows are built by
// one batch insert per table.

import { describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { runsQuery as pgRunsQuery } from "../../src/storage/postgres/run-queries.js";
import { tables } from "../../src/storage/postgres/sql.js";
import { runsQuery as sqliteRunsQuery } from "../../src/storage/sqlite/run-queries.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { RunQuery, Store } from "../../src/storage/store.js";
import { onCleanup, tempDb } from "../helpers.js";
import { sql, tempSchema } from "../postgres/pg.js";

const RUNS = 100_000;
const CUSTOMERS = 1000;

/** The queries checked: one tag, two tags on a later page, a tag with a status and a time window. */
const QUERIES: RunQuery[] = [
  { tags: { customer: "c-7" }, limit: 26 },
  { tags: { customer: "c-7", region: "eu" }, before: { createdAt: 50_007, id: 50_007 }, limit: 26 },
  { tags: { customer: "c-7" }, status: ["failed"], createdAfter: 10_000, limit: 26 },
];

/** What the pages must hold: run i (id i, created at i) has customer c-(i % 1000), region eu when i is odd. */
function expectedKeys(q: RunQuery): string[] {
  const out: string[] = [];
  for (let i = RUNS; i >= 1 && out.length < q.limit; i--) {
    if (i % CUSTOMERS !== 7) continue;
    if (q.tags?.region === "eu" && i % 2 === 0) continue;
    if (q.before && !(i < q.before.id)) continue;
    if (q.status && i % 10 !== 7) continue; // failed: i % 10 === 7
    if (q.createdAfter !== undefined && i < q.createdAfter) continue;
    out.push(`k${i}`);
  }
  return out;
}

async function checkPages(store: Store): Promise<void> {
  for (const q of QUERIES) {
    const keys = (await store.listRuns(q)).map((r) => r.key);
    expect(keys.length).toBeGreaterThan(0);
    expect(keys).toEqual(expectedKeys(q));
  }
}

describe("a tag filter over 100,000 runs is read from the index", () => {
  it("on SQLite: EXPLAIN QUERY PLAN searches run_tags_find and runs by key, no scan of runs, no sort", async () => {
    const store = openSqliteStore(tempDb());
    onCleanup(() => store.close());
    const db = store.db;
    db.transaction(() => {
      const run =
        db.prepare(`INSERT INTO runs (id, workflow, key, version, status, initial_state, state, created_at,
        updated_at) VALUES (?, 'wf', ?, 1, ?, '{}', '{}', ?, ?)`);
      const tag = db.prepare(
        "INSERT INTO run_tags (run_id, name, value, run_created_at) VALUES (?, ?, ?, ?)",
      );
      for (let i = 1; i <= RUNS; i++) {
        run.run(i, `k${i}`, i % 10 === 7 ? "failed" : "completed", i, i);
        tag.run(i, "customer", `c-${i % CUSTOMERS}`, i);
        if (i % 2) tag.run(i, "region", "eu", i);
      }
    })();
    db.exec("ANALYZE");
    for (const q of QUERIES) {
      const { sql: text, args } = sqliteRunsQuery(q);
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...args) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join("\n");
      expect(plan).toMatch(/SEARCH t USING (COVERING )?INDEX run_tags_find \(name=\? AND value=\?/);
      expect(plan).toMatch(/SEARCH runs USING INTEGER PRIMARY KEY \(rowid=\?\)/);
      expect(plan).not.toMatch(/SCAN runs|SCAN t\b|TEMP B-TREE/);
    }
    await checkPages(store);
  });

  it("on PostgreSQL: EXPLAIN scans run_tags_find backward and runs by its key, no sequential scan, no sort", async () => {
    const { schema, url } = await tempSchema();
    const store = await openPostgresStore(url, { listen: false });
    onCleanup(() => store.close());
    const s = `"${schema}"`;
    await sql(`INSERT INTO ${s}.runs (id, workflow, key, version, status, initial_state, state, created_at, updated_at)
      SELECT g, 'wf', 'k' || g, 1, CASE WHEN g % 10 = 7 THEN 'failed' ELSE 'completed' END, '{}', '{}', g, g
      FROM generate_series(1, ${RUNS}) AS g`);
    await sql(`INSERT INTO ${s}.run_tags (run_id, name, value, run_created_at)
      SELECT g, 'customer', 'c-' || (g % ${CUSTOMERS}), g FROM generate_series(1, ${RUNS}) AS g
      UNION ALL SELECT g, 'region', 'eu', g FROM generate_series(1, ${RUNS}, 2) AS g`);
    // Before ANALYZE (as right after a batch load, before autovacuum has been by): the other tag is still
    // read by its primary key for each row of the first, not joined in whole.
    const two = pgRunsQuery(tables(s), QUERIES[1]!);
    const fresh = (await sql<{ "QUERY PLAN": string }>(`EXPLAIN ${two.text}`, two.args))
      .map((r) => r["QUERY PLAN"])
      .join("\n");
    expect(fresh).toMatch(/SubPlan[\s\S]*run_tags_pkey/);
    expect(fresh).not.toMatch(/Seq Scan|Sort|Materialize|Hash|Semi Join|Scan on run_tags_find/);
    await sql(`ANALYZE ${s}.runs; ANALYZE ${s}.run_tags`);
    for (const q of QUERIES) {
      const { text, args } = pgRunsQuery(tables(s), q);
      const plan = (await sql<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, args))
        .map((r) => r["QUERY PLAN"])
        .join("\n");
      expect(plan).toMatch(/Index (Only )?Scan Backward using run_tags_find on run_tags t/);
      expect(plan).toMatch(/Index Scan using runs_pkey on runs r/);
      expect(plan).not.toMatch(/Seq Scan|Sort/);
    }
    await checkPages(store);
  });
});
