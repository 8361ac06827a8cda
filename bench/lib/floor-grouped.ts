// (b)'s writes alone, as Waymark makes them: on Waymark's own schema (every index and trigger its migrations
// create, opened through its store so the file is exactly what the engine writes to) and grouped as its write
// queue groups them, with no engine code. One transaction creates every run; then one per step round writes
// each run's entry (after the lease check Waymark makes per run), the last also finishing each run with the
// UPDATE ... RETURNING a status change makes. What is left between this and Waymark is the engine's own work.

import type Database from "better-sqlite3";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { Durability } from "./common.js";

const INSERT_RUN = `INSERT INTO runs (workflow, key, version, status, input, initial_state, state, wake_at, owner,
  lease_until, created_at, updated_at, trace_context, parent_run_id, concurrency_key, concurrency_limit)
  VALUES (@workflow, @key, @version, @status, @input, @initialState, @state, @wakeAt, @owner,
  @leaseUntil, @createdAt, @updatedAt, @traceContext, @parentRunId, @concurrencyKey, @concurrencyLimit)
  ON CONFLICT (workflow, key) DO NOTHING RETURNING id`;
const UPSERT_ENTRY = `INSERT INTO entries (run_id, seq, scope, ordinal, name, kind, status, started_at, ended_at,
  input, output, error, attempts, detail, state_seq, state_diff) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (run_id, seq) DO UPDATE SET status = excluded.status, ended_at = excluded.ended_at,
  output = excluded.output, attempts = excluded.attempts`;
const FINISH_RUN = `UPDATE runs SET status = @status, output = @output, owner = NULL, lease_until = NULL,
  wake_at = NULL, updated_at = @now, finished_at = @now WHERE id = @id
  RETURNING workflow, concurrency_key, concurrency_limit, parent_run_id`;

/** Writes `runs` runs of `steps` steps as (b) does, in steps + 1 transactions; returns the milliseconds. */
export async function groupedWrites(
  file: string,
  durability: Durability,
  runs: number,
  steps: number,
): Promise<number> {
  const store = openSqliteStore(file, { durability });
  const db: Database.Database = store.db;
  const insertRun = db.prepare(INSERT_RUN).pluck();
  const ownerOf = db.prepare("SELECT owner FROM runs WHERE id = ?").pluck();
  const upsert = db.prepare(UPSERT_ENTRY);
  const finish = db.prepare(FINISH_RUN);
  const owner = "floor:1";
  const t0 = performance.now();
  const now = Date.now();
  const ids: number[] = [];
  db.transaction(() => {
    for (let i = 0; i < runs; i++) {
      const id = insertRun.get({
        workflow: "seq",
        key: `r${i}`,
        version: 1,
        status: "running",
        input: `{"n":${steps}}`,
        initialState: "{}",
        state: "{}",
        wakeAt: now + 60_000,
        owner,
        leaseUntil: now + 60_000,
        createdAt: now,
        updatedAt: now,
        traceContext: null,
        parentRunId: null,
        concurrencyKey: null,
        concurrencyLimit: null,
      }) as number;
      ids.push(id);
    }
  }).immediate();
  for (let s = 0; s < steps; s++) {
    db.transaction(() => {
      for (const id of ids) {
        if (ownerOf.get(id) !== owner) throw new Error("floor: lease lost");
        const at = Date.now();
        upsert.run(
          id,
          s,
          "",
          s,
          `s${s}`,
          "step",
          "completed",
          at,
          at,
          null,
          String(s),
          null,
          null,
          null,
          null,
          null,
        );
        if (s === steps - 1) finish.get({ id, status: "completed", output: String(steps), now: at });
      }
    }).immediate();
  }
  const ms = performance.now() - t0;
  await store.close();
  return ms;
}
