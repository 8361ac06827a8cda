// (p) Pruning rate: finished runs deleted per second by engine.prune (what `waymark prune` does, and retention
// in the scheduler a batch at a time): 100 runs per transaction, each with its entries and messages. The runs
// are written straight through the store (faster to build than executing them), finished two days ago.

import path from "node:path";
import pg from "pg";
import { attach, openStore } from "../../src/index.js";
import { type EntryRow, emptyBatch, type WriteBatch } from "../../src/storage/store.js";
import { type ChildSpec, type Metrics, num, type ScenarioModule } from "../lib/common.js";
import { PG_DATABASE } from "./pg.js";

const ENTRIES = 5;

/**
 * A fresh database for this sample (params.backend): a SQLite file `name`.db in the child's folder, or the
 * PostgreSQL schema waymark_`name`_bench dropped first.
 */
export async function freshDatabase(spec: ChildSpec, name: string): Promise<string> {
  if (spec.params.backend === "sqlite") return path.join(spec.dir, `${name}.db`);
  const schema = `waymark_${name}_bench`;
  const client = new pg.Client({ connectionString: PG_DATABASE });
  await client.connect();
  await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  await client.end();
  const url = new URL(PG_DATABASE);
  url.searchParams.set("schema", schema);
  return url.toString();
}

/** `runs` completed runs of workflow "order", each with ENTRIES step entries and one consumed message. */
async function fill(database: string, runs: number, finishedAt: number): Promise<void> {
  const store = await openStore(database);
  const batch = (parts: Partial<WriteBatch>): WriteBatch => ({ ...emptyBatch(finishedAt), ...parts });
  for (let from = 0; from < runs; from += 500) {
    const n = Math.min(500, runs - from);
    const creates = Array.from({ length: n }, (_, i) => ({
      workflow: "order",
      key: `o-${from + i}`,
      version: 1,
      input: '{"amount":42}',
      initialState: "{}",
      now: finishedAt,
      owner: null,
      leaseUntil: null,
    }));
    const ids = (await store.commit(batch({ creates }))).created.map((c) => c.run.id);
    const entries: EntryRow[] = ids.flatMap((runId) =>
      Array.from({ length: ENTRIES }, (_, k) => ({
        runId,
        seq: k + 1,
        scope: "",
        ordinal: k,
        name: `step-${k}`,
        kind: "step",
        status: "completed",
        startedAt: finishedAt,
        endedAt: finishedAt,
        input: null,
        output: JSON.stringify({ ok: true, note: "x".repeat(150) }),
        error: null,
        attempts: null,
        detail: null,
        stateSeq: null,
        stateDiff: null,
      })),
    );
    const messages = ids.map((runId) => ({
      runId,
      queue: "q",
      body: "{}",
      idempotencyKey: null,
      now: finishedAt,
    }));
    const sent = (await store.commit(batch({ entries, messages }))).messages;
    await store.commit(
      batch({
        consume: sent.map((m, i) => ({ messageId: m.id, runId: ids[i]!, bySeq: ENTRIES })),
        runs: ids.map((id) => ({ id, status: "completed" as const, finishedAt, updatedAt: finishedAt })),
      }),
    );
  }
  await store.close();
}

async function measure(spec: ChildSpec): Promise<Metrics> {
  const runs = num(spec.params, "runs");
  const database = await freshDatabase(spec, "prune");
  await fill(database, runs, Date.now() - 2 * 86_400_000);
  const engine = await attach({ database });
  const started = performance.now();
  const result = await engine.prune({ olderThan: "1d" });
  const ms = performance.now() - started;
  await engine.close();
  if (result.total !== runs) throw new Error(`pruned ${result.total} of ${runs} runs`);
  return { runsPerSec: (runs * 1000) / ms, ms };
}

export const scenario: ScenarioModule = { measure: { waymark: measure } };
