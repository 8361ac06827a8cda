// The million-run database (scenario g): 1,000,000 runs across 10 workflows, 10,000,000 entries. 88% completed,
// 7% failed under 5 signatures, 3% waiting on a queue, 2% sleeping. The engine makes 80 seed runs (one per
// workflow and kind, so every row is exactly as the engine stores it: failure signatures, waits, wake times);
// then SQL clones them in big transactions (INSERT ... SELECT over a numbers table), shifting ids and times.
// Built once and kept under bench/.cache because even this takes a few minutes.

import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { z } from "zod";
import { FatalError, setup, workflow } from "../../src/index.js";
import { SCHEMA_VERSION } from "../../src/storage/sqlite/migrations.js";
import { CACHE_DIR, partialBuild } from "./common.js";

// 2: a step completed on its first attempt stores no attempts (the seeds are real runs, so the file shrinks).
const BUILDER_VERSION = 2;
export const MILLION_WORKFLOWS = 10;
export const SIGNATURES = 5;
/** Kinds by a run's bucket of 100: 0-87 completed, 88-94 failed (signature bucket mod 5), 95-97 queue, 98-99 sleep. */
export type Kind = "ok" | `fail${number}` | "queue" | "sleep";
export function kindOf(i: number): Kind {
  const b = Math.floor(i / MILLION_WORKFLOWS) % 100;
  if (b < 88) return "ok";
  if (b < 95) return `fail${b % SIGNATURES}`;
  return b < 98 ? "queue" : "sleep";
}
const KINDS: Kind[] = ["ok", "fail0", "fail1", "fail2", "fail3", "fail4", "queue", "sleep"];
const REASONS = ["card declined", "address invalid", "stock missing", "carrier timeout", "tax lookup failed"];

/** Run i: workflow wf-(i mod 10), key wf-N-0000042. */
export function millionAddress(i: number): { workflow: string; key: string } {
  const w = `wf-${i % MILLION_WORKFLOWS}`;
  return { workflow: w, key: `${w}-${String(i).padStart(7, "0")}` };
}

/** Each kind records 10 entries: completed 10 steps; failed 9 steps and the failing one; waits 9 steps and the wait. */
function defineWorkflow(n: number) {
  return workflow({
    description: `Workflow ${n} of the million-run bench: 10 entries a run.`,
    state: { done: 0 },
    queues: { approve: z.object({ ok: z.boolean() }) },
    run: async (ctx, input: { kind: Kind; customer: string }) => {
      const last = input.kind === "ok" ? 10 : 9;
      for (let i = 0; i < last; i++) {
        await ctx.step(`step-${i}`, (s) => {
          s.state.done += 1;
          return { sku: `SKU-${(i * 7919) % 1000}`, qty: i + 1 };
        });
      }
      if (input.kind.startsWith("fail")) {
        await ctx.step("charge", () => {
          throw new FatalError(`${REASONS[Number(input.kind.slice(4))]} for customer ${input.customer}`);
        });
      }
      if (input.kind === "queue") await ctx.queue.next("approval", { queue: "approve" });
      if (input.kind === "sleep") await ctx.sleep("cool-off", "3650d");
      return { ok: true };
    },
  });
}

export const millionRegistry = setup({
  use: Object.fromEntries(
    Array.from({ length: MILLION_WORKFLOWS }, (_, n) => [`wf-${n}`, defineWorkflow(n)]),
  ),
});

export function millionDatabasePath(runs: number): string {
  return path.join(CACHE_DIR, `million-${runs}-s${SCHEMA_VERSION}-b${BUILDER_VERSION}.db`);
}

/** The first run's created_at; run i is created 2 s after run i-1 (1,000,000 runs span 23 days). */
export const MILLION_T0 = Date.UTC(2026, 0, 1);
export const MILLION_GAP_MS = 2000;
const CHUNK = 50_000;

/** Seeds through the engine, then clones them (skipped if `file` exists). */
export async function buildMillionDatabase(
  file: string,
  runs: number,
  log: (line: string) => void,
): Promise<void> {
  const partial = partialBuild(file);
  if (partial === null) return;
  const t0 = performance.now();
  const engine = await millionRegistry.start({ database: partial });
  const seeds = new Map<string, string>(); // "wf-3|fail2" -> seed key
  for (let n = 0; n < MILLION_WORKFLOWS; n++) {
    for (const kind of KINDS) {
      const key = `seed-${kind}`;
      const h = await engine.getOrCreate(`wf-${n}` as never, key, { kind, customer: `c${n}` } as never);
      if (kind === "ok" || kind.startsWith("fail")) await h.result().catch(() => {});
      seeds.set(`wf-${n}|${kind}`, key);
    }
  }
  // The waiting and sleeping seeds suspend after 9 steps; wait until each has its 10th entry.
  const db0 = new Database(partial);
  for (let tries = 0; ; tries++) {
    const suspended = db0
      .prepare("SELECT count(*) FROM runs WHERE status IN ('waiting', 'sleeping')")
      .pluck()
      .get() as number;
    if (suspended === MILLION_WORKFLOWS * 2) break;
    if (tries > 600) throw new Error(`only ${suspended} seeds suspended`);
    await new Promise((r) => setTimeout(r, 50));
  }
  db0.close();
  await engine.close();
  const db = new Database(partial);
  db.pragma("synchronous = OFF");
  const seedId = db.prepare("SELECT id FROM runs WHERE workflow = ? AND key = ?").pluck();
  const statuses = db.prepare("SELECT status, count(*) n FROM runs GROUP BY status").all();
  log(`seeded ${JSON.stringify(statuses)} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const maxSeed = db.prepare("SELECT max(id) FROM runs").pluck().get() as number;
  db.exec("CREATE TEMP TABLE plan (i INTEGER PRIMARY KEY, seed INTEGER NOT NULL)");
  const addPlan = db.prepare("INSERT INTO plan (i, seed) VALUES (?, ?)");
  const seedOf = new Map<string, number>();
  for (const [k, key] of seeds) seedOf.set(k, seedId.get(k.split("|")[0], key) as number);
  db.transaction(() => {
    for (let i = 0; i < runs; i++) addPlan.run(i, seedOf.get(`wf-${i % MILLION_WORKFLOWS}|${kindOf(i)}`)!);
  })();
  const columns = (table: string) =>
    (db.prepare(`SELECT name FROM pragma_table_info('${table}')`).pluck().all() as string[]).filter(
      (c) => c !== "id",
    );
  const idBase = maxSeed + 1;
  const shift = `(${MILLION_T0} + p.i * ${MILLION_GAP_MS} - r.created_at)`;
  const runOverride: Record<string, string> = {
    key: `r.workflow || '-' || printf('%07d', p.i)`,
    created_at: `${MILLION_T0} + p.i * ${MILLION_GAP_MS}`,
    updated_at: `r.updated_at + ${shift}`,
    finished_at: `r.finished_at + ${shift}`,
    wake_at: `r.wake_at + ${shift}`,
  };
  const runCols = columns("runs");
  const cloneRuns = db.prepare(
    `INSERT INTO runs (id, ${runCols.join(", ")}) SELECT ${idBase} + p.i, ${runCols
      .map((c) => runOverride[c] ?? `r.${c}`)
      .join(", ")} FROM plan p JOIN runs r ON r.id = p.seed WHERE p.i >= ? AND p.i < ? ORDER BY p.i`,
  );
  const entryCols = columns("entries").filter((c) => c !== "run_id");
  const entryOverride: Record<string, string> = {
    started_at: `e.started_at + ${shift}`,
    ended_at: `e.ended_at + ${shift}`,
  };
  const cloneEntries = db.prepare(
    `INSERT INTO entries (run_id, ${entryCols.join(", ")}) SELECT ${idBase} + p.i, ${entryCols
      .map((c) => entryOverride[c] ?? `e.${c}`)
      .join(", ")} FROM plan p JOIN runs r ON r.id = p.seed JOIN entries e ON e.run_id = p.seed
      WHERE p.i >= ? AND p.i < ? ORDER BY p.i, e.seq`,
  );
  for (let from = 0; from < runs; from += CHUNK) {
    db.transaction(() => {
      cloneRuns.run(from, from + CHUNK);
      cloneEntries.run(from, from + CHUNK);
    })();
    if ((from / CHUNK) % 4 === 3)
      log(
        `cloned ${(from + CHUNK).toLocaleString("en")} runs (${((performance.now() - t0) / 1000).toFixed(0)} s)`,
      );
  }
  // The seeds go: the database holds exactly `runs` runs.
  db.transaction(() => {
    db.prepare("DELETE FROM entries WHERE run_id < ?").run(idBase);
    db.prepare("DELETE FROM runs WHERE id < ?").run(idBase);
  })();
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  fs.renameSync(partial, file);
  for (const suffix of ["-wal", "-shm"]) fs.rmSync(partial + suffix, { force: true });
  log(`built ${runs.toLocaleString("en")} runs in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
}
