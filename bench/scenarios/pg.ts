// PostgreSQL rows: steps per second for 1 run × n steps and m runs × 10 steps, Waymark and DBOS side by side
// on the same database (each in its own schema, dropped before every sample), and Waymark with 1, 2 and 4
// engine processes sharing one schema (variant "procs": this child starts the workers and sums them up).

import { spawn } from "node:child_process";
import path from "node:path";
import readline from "node:readline";
import { DBOS } from "@dbos-inc/dbos-sdk";
import pg from "pg";
import { type ChildSpec, type Metrics, num, ROOT, rate, type ScenarioModule } from "../lib/common.js";
import { registry, runConcurrently, startWaymark } from "../lib/workflows.js";

export const PG_DATABASE = process.env.WAYMARK_BENCH_PG ?? "postgres://postgres@127.0.0.1:5432/test";
export const WAYMARK_SCHEMA = "waymark_bench";
export const DBOS_SCHEMA = "dbos_bench";
export const FLOOR_SCHEMA = "floor_bench";

export function waymarkUrl(): string {
  const u = new URL(PG_DATABASE);
  u.searchParams.set("schema", WAYMARK_SCHEMA);
  return u.toString();
}

async function dropSchema(schema: string): Promise<void> {
  const client = new pg.Client({ connectionString: PG_DATABASE });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
  } finally {
    await client.end();
  }
}

async function waymark(spec: ChildSpec): Promise<Metrics> {
  const runs = num(spec.params, "runs");
  const n = num(spec.params, "steps");
  await dropSchema(WAYMARK_SCHEMA);
  const engine = await startWaymark(waymarkUrl(), "normal"); // durability is SQLite's; PostgreSQL commits are synchronous
  const { ms, commits } = await runConcurrently(engine, runs, n);
  await engine.close();
  return { ...rate(runs * n, ms), commits };
}

async function dbos(spec: ChildSpec): Promise<Metrics> {
  const runs = num(spec.params, "runs");
  const n = num(spec.params, "steps");
  await dropSchema(DBOS_SCHEMA);
  DBOS.setConfig({
    name: "waymark-bench",
    systemDatabaseUrl: PG_DATABASE,
    systemDatabaseSchemaName: DBOS_SCHEMA,
    logLevel: "error",
  });
  const seq = DBOS.registerWorkflow(
    async (count: number) => {
      for (let i = 0; i < count; i++) await DBOS.runStep(async () => i, { name: `s${i}` });
      return count;
    },
    { name: "seq" },
  );
  await DBOS.launch();
  const t0 = performance.now();
  const handles = await Promise.all(
    Array.from({ length: runs }, (_, i) => DBOS.startWorkflow(seq, { workflowID: `r${i}` })(n)),
  );
  await Promise.all(handles.map((h) => h.getResult()));
  const ms = performance.now() - t0;
  await DBOS.shutdown();
  return rate(runs * n, ms);
}

/** P engine processes on one schema, each running runs/P runs of 10 steps, started together. */
async function processes(spec: ChildSpec): Promise<Metrics> {
  const procs = num(spec.params, "procs");
  const runs = num(spec.params, "runs");
  const n = num(spec.params, "steps");
  await dropSchema(WAYMARK_SCHEMA);
  // Create the schema once, so the workers do not race to migrate it.
  await (await registry.start({ database: waymarkUrl() })).close();
  const workers = Array.from({ length: procs }, (_, w) => {
    const child = spawn(
      process.execPath,
      [
        "--import",
        "tsx",
        path.join(ROOT, "bench/scenarios/pg-worker.ts"),
        waymarkUrl(),
        String(w),
        String(runs / procs),
        String(n),
        String(spec.params.await ?? "result"),
      ],
      { cwd: ROOT, stdio: ["pipe", "pipe", "inherit"] },
    );
    const lines = readline.createInterface({ input: child.stdout! });
    const next = () =>
      new Promise<string>((resolve, reject) => {
        lines.once("line", resolve);
        child.once("exit", (code) => reject(new Error(`pg worker ${w} exited with ${code}`)));
      });
    return { child, next };
  });
  await Promise.all(workers.map((w) => w.next().then((l) => l === "ready" || Promise.reject(new Error(l)))));
  const done = workers.map((w) => w.next());
  for (const w of workers) w.child.stdin!.write("go\n");
  const spans = (await Promise.all(done)).map((l) => JSON.parse(l) as { start: number; end: number });
  for (const w of workers) w.child.stdin!.end();
  const ms = Math.max(...spans.map((s) => s.end)) - Math.min(...spans.map((s) => s.start));
  return rate(runs * n, ms);
}

/**
 * The PostgreSQL floor: what one commit per step costs without an engine. Each "run" inserts its steps' rows
 * one autocommit INSERT at a time (one round trip and one commit each); runs share a pool of 10 connections
 * (Waymark's and DBOS's default) and go concurrently.
 */
async function floor(spec: ChildSpec): Promise<Metrics> {
  const runs = num(spec.params, "runs");
  const n = num(spec.params, "steps");
  await dropSchema(FLOOR_SCHEMA);
  const pool = new pg.Pool({ connectionString: PG_DATABASE, max: 10 });
  await pool.query(`CREATE SCHEMA "${FLOOR_SCHEMA}"; CREATE TABLE "${FLOOR_SCHEMA}".entries (run_id bigint NOT NULL,
    seq bigint NOT NULL, name text NOT NULL, status text NOT NULL, started_at bigint, ended_at bigint, output text,
    attempts text, PRIMARY KEY (run_id, seq))`);
  const insert = `INSERT INTO "${FLOOR_SCHEMA}".entries VALUES ($1, $2, $3, 'completed', $4, $4, $5, $6)`;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: runs }, async (_, r) => {
      for (let i = 0; i < n; i++) {
        const now = Date.now();
        await pool.query({
          name: "floor_insert",
          text: insert,
          values: [r, i, `s${i}`, now, String(i), `[{"n":1,"startedAt":${now},"status":"completed"}]`],
        });
      }
    }),
  );
  const ms = performance.now() - t0;
  await pool.end();
  await dropSchema(FLOOR_SCHEMA);
  return rate(runs * n, ms);
}

export const scenario: ScenarioModule = {
  measure: {
    waymark: (spec) => (spec.params.variant === "procs" ? processes(spec) : waymark(spec)),
    dbos,
    floor,
  },
};
