// Store conformance: the latest completed run of a workflow version (compare_runs' default other run,
// diagnose_run's sibling), on SQLite and PostgreSQL alike; and that it is one index probe on both.

import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { latestCompletedSql } from "../../src/storage/postgres/run-queries.js";
import { tables } from "../../src/storage/postgres/sql.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { LATEST_COMPLETED_SQL } from "../../src/storage/sqlite/statements.js";
import type { RunRow, Store } from "../../src/storage/store.js";
import { onCleanup, tempDb } from "../helpers.js";
import { PG_URL, tempSchema } from "../postgres/pg.js";
import { BACKENDS, batch } from "./backends.js";
import { createRun, T0 } from "./fixtures.js";

async function finish(store: Store, run: RunRow, status: "completed" | "failed", at: number) {
  await store.commit(batch(at, { runs: [{ id: run.id, status, finishedAt: at, updatedAt: at }] }));
}

describe.each(BACKENDS)("$name store: latest completed run", (backend) => {
  it("is the completed run of the same workflow and version that finished last, never the run itself", async () => {
    const store = await (await backend.fresh()).open();
    const early = await createRun(store, "early", { workflow: "invoice", version: 2, now: T0 });
    const late = await createRun(store, "late", { workflow: "invoice", version: 2, now: T0 + 1 });
    const failed = await createRun(store, "failed", { workflow: "invoice", version: 2, now: T0 + 2 });
    const v1 = await createRun(store, "v1", { workflow: "invoice", version: 1, now: T0 + 3 });
    const other = await createRun(store, "other", { workflow: "report", version: 2, now: T0 + 4 });
    const live = await createRun(store, "live", { workflow: "invoice", version: 2, now: T0 + 5 });
    // Created first but finished last: finishing time decides, not creation.
    await finish(store, late, "completed", T0 + 100);
    await finish(store, early, "completed", T0 + 200);
    await finish(store, failed, "failed", T0 + 300);
    await finish(store, v1, "completed", T0 + 400);
    await finish(store, other, "completed", T0 + 500);

    expect((await store.latestCompletedRun("invoice", 2, failed.id))?.key).toBe("early");
    expect((await store.latestCompletedRun("invoice", 2, live.id))?.key).toBe("early");
    expect((await store.latestCompletedRun("invoice", 2, early.id))?.key).toBe("late");
    expect((await store.latestCompletedRun("invoice", 1, failed.id))?.key).toBe("v1");
    expect(await store.latestCompletedRun("invoice", 1, v1.id)).toBeUndefined();
    expect(await store.latestCompletedRun("invoice", 3, failed.id)).toBeUndefined();
    expect(await store.latestCompletedRun("nothing", 2, failed.id)).toBeUndefined();
  });
});

/** Many runs of one workflow version, most of them not completed, so a plan that scans would show. */
async function fill(store: Store): Promise<number> {
  const creates = Array.from({ length: 3000 }, (_, i) => ({
    workflow: i % 3 ? "invoice" : "report",
    key: `k-${i}`,
    version: 1 + (i % 2),
    input: null,
    initialState: "{}",
    now: T0 + i,
    owner: null,
    leaseUntil: null,
  }));
  const res = await store.commit(batch(T0, { creates }));
  const ids = res.created.map((c) => c.run.id);
  const runs = ids.map((id, i) =>
    i % 10 === 0
      ? { id, status: "completed" as const, finishedAt: T0 + 10_000 + i }
      : { id, status: "failed" as const, finishedAt: T0 + 10_000 + i },
  );
  await store.commit(batch(T0 + 20_000, { runs }));
  return ids.at(-1)!;
}

describe("the lookup's query plan", () => {
  it("SQLite searches the runs_completed index, no scan and no sort", async () => {
    const path = tempDb();
    const store = openSqliteStore(path);
    onCleanup(() => store.close());
    const last = await fill(store);
    const db = new Database(path);
    onCleanup(() => {
      db.close();
    });
    const plan = () =>
      (
        db.prepare(`EXPLAIN QUERY PLAN ${LATEST_COMPLETED_SQL}`).all("invoice", 2, last) as Array<{
          detail: string;
        }>
      )
        .map((r) => r.detail)
        .join("\n");
    // As Waymark leaves a database (no statistics), and after ANALYZE.
    for (const analyse of [false, true]) {
      if (analyse) db.exec("ANALYZE");
      expect(plan()).toMatch(/SEARCH runs USING INDEX runs_completed \(workflow=\? AND version=\?\)/);
      expect(plan()).not.toMatch(/SCAN|TEMP B-TREE/);
    }
  });

  it("PostgreSQL scans the runs_completed index backwards, no sequential scan and no sort", async () => {
    const { schema, url } = await tempSchema();
    const store = await openPostgresStore(url);
    onCleanup(() => store.close());
    const last = await fill(store);
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    onCleanup(() => client.end());
    await client.query(`ANALYZE "${schema}".runs`);
    const text = latestCompletedSql(tables(`"${schema}"`));
    const plan = (await client.query(`EXPLAIN ${text}`, ["invoice", 2, last])).rows
      .map((r: Record<string, string>) => Object.values(r)[0])
      .join("\n");
    expect(plan).toMatch(/Index Scan Backward using runs_completed/);
    expect(plan).not.toMatch(/Seq Scan|Sort/);
  });
});
