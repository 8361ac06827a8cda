// A search in error text (list_runs errorContains) walks only the runs that have an error, newest first, from
// the partial index runs_error_created: 20,000 runs of which 1 in 50 failed. Checked by the query plan and
// by the answers (a string some errors hold, one none holds); a substring cannot be looked up, so a string no
// error holds still reads every failed run, but no longer every run.

import { describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { runsQuery as pgRunsQuery } from "../../src/storage/postgres/run-queries.js";
import { tables } from "../../src/storage/postgres/sql.js";
import { runsQuery as sqliteRunsQuery } from "../../src/storage/sqlite/run-queries.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { RunQuery, Store } from "../../src/storage/store.js";
import { onCleanup, tempDb } from "../helpers.js";
import { sql, tempSchema } from "../postgres/pg.js";

const RUNS = 20_000;
const error = (i: number) =>
  JSON.stringify({ name: "Error", message: i % 1000 === 0 ? `Stock missing ${i}` : `HTTP 503 ${i}` });

const FOUND: RunQuery = { errorContains: "stock MISSING", limit: 5 };
const NONE: RunQuery = { errorContains: "no run has this", limit: 5 };

async function checkAnswers(store: Store): Promise<void> {
  expect((await store.listRuns(FOUND)).map((r) => r.key)).toEqual([
    "k20000",
    "k19000",
    "k18000",
    "k17000",
    "k16000",
  ]);
  expect(await store.listRuns(NONE)).toEqual([]);
}

describe("a search in error text reads the runs with an error only", () => {
  it("on SQLite: EXPLAIN QUERY PLAN scans runs_error_created, not runs", async () => {
    const store = openSqliteStore(tempDb());
    onCleanup(() => store.close());
    const db = store.db;
    const run = db.prepare(`INSERT INTO runs (id, workflow, key, version, status, error, initial_state, state,
      created_at, updated_at) VALUES (?, 'wf', ?, 1, ?, ?, '{}', '{}', ?, ?)`);
    db.transaction(() => {
      for (let i = 1; i <= RUNS; i++) {
        const failed = i % 50 === 0;
        run.run(i, `k${i}`, failed ? "failed" : "completed", failed ? error(i) : null, i, i);
      }
    })();
    db.exec("ANALYZE");
    for (const q of [FOUND, NONE]) {
      const { sql: text, args } = sqliteRunsQuery(q);
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...args) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join("\n");
      expect(plan).toMatch(/SCAN runs USING INDEX runs_error_created/);
      expect(plan).not.toMatch(/TEMP B-TREE/);
    }
    await checkAnswers(store);
  });

  it("on PostgreSQL: EXPLAIN scans runs_error_created backward, no sequential scan", async () => {
    const { schema, url } = await tempSchema();
    const store = await openPostgresStore(url, { listen: false });
    onCleanup(() => store.close());
    const s = `"${schema}"`;
    await sql(`INSERT INTO ${s}.runs (id, workflow, key, version, status, error, initial_state, state, created_at, updated_at)
      SELECT g, 'wf', 'k' || g, 1, CASE WHEN g % 50 = 0 THEN 'failed' ELSE 'completed' END,
        CASE WHEN g % 50 <> 0 THEN NULL WHEN g % 1000 = 0
          THEN json_build_object('name', 'Error', 'message', 'Stock missing ' || g)::text
          ELSE json_build_object('name', 'Error', 'message', 'HTTP 503 ' || g)::text END,
        '{}', '{}', g, g
      FROM generate_series(1, ${RUNS}) AS g`);
    await sql(`ANALYZE ${s}.runs`);
    for (const q of [FOUND, NONE]) {
      const { text, args } = pgRunsQuery(tables(s), q);
      const plan = (await sql<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, args))
        .map((r) => r["QUERY PLAN"])
        .join("\n");
      expect(plan).toMatch(/Index Scan Backward using runs_error_created/);
      expect(plan).not.toMatch(/Seq Scan/);
    }
    await checkAnswers(store);
  });
});
