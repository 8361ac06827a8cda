// A search in error text (list_runs errorContains) over 20,000 runs of which 1 in 50 failed is answered from
// the trigram index of error text (migration 15): on SQLite the run_errors FTS5 table gives the candidates,
// looked up by key when few (a string few or no errors hold) or checked while walking runs_error_created
// newest first when many (the runs with an error only, never a scan of runs); on PostgreSQL a Bitmap Index
// Scan on the pg_trgm index runs_error_trgm when few, the walk of runs_error_created when many, and first of
// all a bounded walk of the newest runs with an error (a common string fills its page there). Checked by the
// query plan, by the answers, and on SQLite by the index's size (small beside the runs it indexes).

import pg from "pg";
import { describe, expect, it, vi } from "vitest";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { ERROR_FEW, errorProbe, runsQuery as pgRunsQuery } from "../../src/storage/postgres/run-queries.js";
import { tables } from "../../src/storage/postgres/sql.js";
import { errorSearch, runsQuery as sqliteRunsQuery } from "../../src/storage/sqlite/run-queries.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { RunQuery, Store } from "../../src/storage/store.js";
import { onCleanup, tempDb } from "../helpers.js";
import { PG_URL, sql, tempSchema } from "../postgres/pg.js";

const RUNS = 20_000;
const error = (i: number) =>
  JSON.stringify({ name: "Error", message: i % 1000 === 0 ? `Stock missing ${i}` : `HTTP 503 ${i}` });

const FOUND: RunQuery = { errorContains: "stock MISSING", limit: 5 };
const NONE: RunQuery = { errorContains: "no run has this", limit: 5 };
/** 380 failed runs hold it: many candidates. */
const MANY: RunQuery = { errorContains: "http 503", limit: 5 };

async function checkAnswers(store: Store): Promise<void> {
  expect((await store.listRuns(FOUND)).map((r) => r.key)).toEqual([
    "k20000",
    "k19000",
    "k18000",
    "k17000",
    "k16000",
  ]);
  expect(await store.listRuns(NONE)).toEqual([]);
  expect((await store.listRuns(MANY)).map((r) => r.key)).toEqual([
    "k19950",
    "k19900",
    "k19850",
    "k19800",
    "k19750",
  ]);
}

describe("a search in error text is answered from the trigram index", () => {
  it("on SQLite: EXPLAIN QUERY PLAN reads run_errors, then runs by key (few) or runs_error_created (many)", async () => {
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
    const planOf = (q: RunQuery) => {
      const { sql: text, args } = sqliteRunsQuery(q, errorSearch(db, q).plan);
      return (db.prepare(`EXPLAIN QUERY PLAN ${text}`).all(...args) as Array<{ detail: string }>)
        .map((r) => r.detail)
        .join("\n");
    };
    for (const q of [FOUND, NONE]) {
      expect(errorSearch(db, q).plan).toBe("few");
      const plan = planOf(q);
      expect(plan).toMatch(/SCAN e VIRTUAL TABLE INDEX 0:M|SCAN run_errors VIRTUAL TABLE INDEX 0:M/);
      expect(plan).toMatch(/SEARCH runs USING INTEGER PRIMARY KEY \(rowid=\?\)/);
      expect(plan).not.toMatch(/SCAN runs/);
    }
    expect(errorSearch(db, MANY).plan).toBe("many");
    const many = planOf(MANY);
    expect(many).toMatch(/SCAN runs USING INDEX runs_error_created/);
    expect(many).toMatch(/SCAN run_errors VIRTUAL TABLE INDEX 0:M/);
    expect(many).not.toMatch(/TEMP B-TREE/);
    await checkAnswers(store);
    // The index's pages beside the runs table's (whose errors are a third of its bytes here).
    const bytes = (like: string) =>
      db.prepare("SELECT coalesce(sum(pgsize), 0) FROM dbstat WHERE name LIKE ?").pluck().get(like) as number;
    const index = bytes("run_errors%");
    expect(index).toBeGreaterThan(0);
    expect(index).toBeLessThan(bytes("runs") * 0.1);
  });

  it("on PostgreSQL: EXPLAIN takes a Bitmap Index Scan on runs_error_trgm for few candidates, no sequential scan", async () => {
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
    const planOf = async (q: RunQuery) => {
      const probe = errorProbe(tables(s), q)!;
      const n = (await sql<{ n: number }>(probe.text, probe.args))[0]!.n;
      const { text, args } = pgRunsQuery(tables(s), q, n < ERROR_FEW ? "few" : "scan");
      return (await sql<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, args))
        .map((r) => r["QUERY PLAN"])
        .join("\n");
    };
    for (const q of [FOUND, NONE]) {
      const plan = await planOf(q);
      expect(plan).toMatch(/Bitmap Index Scan on runs_error_trgm/);
      expect(plan).not.toMatch(/Seq Scan/);
    }
    // Many candidates: the newest runs with an error are walked (a sort of all 380 would read them all).
    const many = await planOf(MANY);
    expect(many).toMatch(/Index Scan Backward using runs_error_created/);
    expect(many).not.toMatch(/Seq Scan|Sort/);
    // What the store reads first for any string with a trigram: the newest runs with an error, a bounded walk
    // of the same index (no bitmap of the trigram index's candidates: for a common string that alone cost more).
    for (const q of [FOUND, MANY]) {
      const { text, args } = pgRunsQuery(tables(s), q, "newest");
      const plan = (await sql<{ "QUERY PLAN": string }>(`EXPLAIN ${text}`, args))
        .map((r) => r["QUERY PLAN"])
        .join("\n");
      expect(plan).toMatch(/Index Scan Backward using runs_error_created/);
      expect(plan).toMatch(/WindowAgg/);
      expect(plan).not.toMatch(/Seq Scan|Sort|Bitmap/);
    }
    await checkAnswers(store);
  });

  it("on PostgreSQL without pg_trgm (a role that may not create extensions): opens, says so, searches as before", async () => {
    const name = `wmt_noext_${process.pid}_${Date.now().toString(36)}`;
    await sql(`CREATE DATABASE "${name}"`);
    await sql(`CREATE ROLE "${name}" LOGIN`);
    onCleanup(async () => {
      await sql(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      await sql(`DROP ROLE IF EXISTS "${name}"`);
    });
    const url = (user: string) => {
      const u = new URL(PG_URL);
      u.username = user;
      u.pathname = `/${name}`;
      return u.toString();
    };
    const admin = async (text: string) => {
      const client = new pg.Client({ connectionString: url(new URL(PG_URL).username) });
      await client.connect();
      try {
        return (await client.query(text)).rows;
      } finally {
        await client.end();
      }
    };
    // The role owns its schema but may not create in the database (no CREATE: no extension, trusted or not).
    await admin(`REVOKE CREATE ON DATABASE "${name}" FROM PUBLIC; CREATE SCHEMA wm AUTHORIZATION "${name}"`);
    const lines: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
    let store: Store;
    try {
      store = await openPostgresStore(`${url(name)}?schema=wm`, { listen: false });
    } finally {
      spy.mockRestore();
    }
    expect(lines.join("")).toMatch(/no trigram index of error text \(pg_trgm: permission denied[^)]*\)/);
    await admin(`INSERT INTO wm.runs (id, workflow, key, version, status, error, initial_state, state, created_at,
      updated_at) VALUES (1, 'wf', 'k1', 1, 'failed', '{"message":"Stock missing 50% off"}', '{}', '{}', 1, 1)`);
    expect(
      (await store.listRuns({ errorContains: "stock MISSING 50%", limit: 5 })).map((r) => r.key),
    ).toEqual(["k1"]);
    await store.close();
    // Once someone who may has created the extension, the next start makes the index.
    await admin("CREATE EXTENSION pg_trgm");
    const again = await openPostgresStore(`${url(name)}?schema=wm`, { listen: false });
    onCleanup(() => again.close());
    expect(await admin("SELECT to_regclass('wm.runs_error_trgm') IS NOT NULL AS ok")).toEqual([{ ok: true }]);
    expect(
      (await again.listRuns({ errorContains: "stock MISSING 50%", limit: 5 })).map((r) => r.key),
    ).toEqual(["k1"]);
  });
});
