// (r) Restart with many runs in flight: `runs` runs of the endless workflow have each recorded steps s0–s4
// and are inside s5 (its hook never settles) when their process is killed. Measured: from opening the
// stored state until every run has recorded s5, its next step (seen as s6 beginning: a step returns only
// once its record is committed, in both engines), and until every run has resumed (s5 begun).
//
// Templates (prepare, once per subject, untimed). Waymark and Rivet on SQLite: a real process
// (bench/r-crash.ts) starts the runs on a SQLite file (Waymark: leaseMs 1000, maxActiveRuns = runs),
// prints "ready" once every run is inside s5, and the preparing process SIGKILLs it; the killed file (with
// its -wal and -shm) is the template. Rivet in memory: the same runs built in the preparing process on
// RivetMemoryDriver, whose KV is saved once every run is inside s5 (what a clone of each driver would hold;
// an in-memory store does not survive a real kill, so this is the peer at its most favourable).
//
// Measuring (a fresh child process per sample, like every figure, so no heap or module state of the killed
// run is reused): Waymark calls registry.start() on a copy of the template with the defaults except
// maxActiveRuns = runs (so every run may be held at once); the clock starts before start(), so opening
// the file, WAL recovery, the dead owner's takeover, claiming, loading and replaying are all inside it.
// Rivet has no scheduler: the host calls runWorkflow() for every run at once (SQLite: opening the
// connection is inside the clock; in memory: the saved KV is decoded before it).
//
// Leases: the killed process's owner id names a pid of this host that no longer exists, so start()
// expires its leases at once (expireDeadOwners); and each sample waits until the kill is at least leaseMs
// old before the clock starts (it always is: templates are built before the samples). So no lease wait is
// in the figure. A restart on another machine cannot tell the owner is dead and would first wait out the
// lease, up to leaseMs (1 s here) after the kill, on top of this figure; Rivet has no leases (its host
// decides when to run a workflow again).

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { runWorkflow, type WorkflowContextInterface } from "@rivetkit/workflow-engine";
import type { Engine } from "../../src/engine/engine.js";
import {
  copyDatabase,
  type Durability,
  deferred,
  num,
  pool,
  profiler,
  ROOT,
  type ScenarioModule,
  settle,
} from "../lib/common.js";
import { registry, setHook } from "../lib/workflows.js";
import { RivetMemoryDriver } from "../peers/rivet-memory.js";
import { RivetSqlite } from "../peers/rivet-sqlite.js";

/** The step each run is inside when its process is killed (s0 to s4 are recorded). */
export const IN_FLIGHT = 5;
/** Waymark's lease in the killed process. */
export const LEASE_MS = 1000;

const never = () => new Promise<number>(() => {});

/** What step i of both engines' workflow does (Waymark's `endless` through setHook, Rivet's below). */
let stepFn: (i: number) => number | Promise<number> = (i) => i;
function onStep(fn: (i: number) => number | Promise<number>): void {
  stepFn = fn;
  setHook(fn);
}

/**
 * Rivet's side of `endless`. Its steps time out after 30 s by default, which Waymark's do not: with the
 * timeout off, a run hanging in a step stays as it is however long the others take.
 */
async function rivetInFlight(ctx: WorkflowContextInterface): Promise<never> {
  for (let i = 0; ; i++) await ctx.step({ name: `s${i}`, timeout: 0, run: async () => stepFn(i) });
}

const runId = (i: number) => `r${i}`;

/** Records s0..s4 and hangs in s5; resolves once `runs` runs hang there. */
function hangInFlight(runs: number): Promise<void> {
  const all = deferred();
  let hung = 0;
  onStep((i) => {
    if (i < IN_FLIGHT) return i;
    if (++hung === runs) all.resolve();
    return never();
  });
  return all.promise;
}

export type CrashSubject = "waymark" | "rivet-sqlite";

/** Starts `runs` runs on `file` and resolves once every one is inside s5 (bench/r-crash.ts, then killed). */
export async function startInFlight(subject: CrashSubject, file: string, runs: number): Promise<void> {
  const hung = hangInFlight(runs);
  if (subject === "waymark") {
    const engine = (await registry.start({
      database: file,
      durability: "normal",
      leaseMs: LEASE_MS,
      maxActiveRuns: runs,
    })) as unknown as Engine;
    await pool(runs, 1000, async (i) => {
      await engine.getOrCreate("endless", runId(i));
    });
  } else {
    const store = new RivetSqlite(file, "normal");
    for (let i = 0; i < runs; i++)
      void runWorkflow(runId(i), rivetInFlight, undefined, store.driver(runId(i)));
  }
  await hung;
}

/** When the template's process was killed, beside the template. */
const killedFile = (template: string) => `${template}.killed.json`;

/** Runs bench/r-crash.ts until it says every run is in flight, then SIGKILLs it. */
async function crash(subject: CrashSubject, template: string, runs: number): Promise<void> {
  for (const f of [template, `${template}-wal`, `${template}-shm`]) fs.rmSync(f, { force: true });
  const child = spawn(
    process.execPath,
    [
      "--max-old-space-size=8192",
      "--import",
      "tsx",
      path.join(ROOT, "bench/r-crash.ts"),
      subject,
      template,
      String(runs),
    ],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  const exited = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on("exit", (code, signal) => resolve(signal ?? code)),
  );
  const ready = await new Promise<boolean>((resolve) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      if (out.includes("ready\n")) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  if (!ready)
    throw new Error(`r-crash ${subject} exited (${String(await exited)}) before its runs were in flight`);
  child.kill("SIGKILL");
  const how = await exited;
  if (how !== "SIGKILL") throw new Error(`r-crash ${subject} ended by ${String(how)}, not SIGKILL`);
  fs.writeFileSync(killedFile(template), JSON.stringify({ killedAt: Date.now(), leaseMs: LEASE_MS }));
}

/** Waits until the killed process's leases (leaseMs from the kill) have lapsed. */
async function leasesLapsed(template: string): Promise<void> {
  const { killedAt, leaseMs } = JSON.parse(fs.readFileSync(killedFile(template), "utf8")) as {
    killedAt: number;
    leaseMs: number;
  };
  const left = killedAt + leaseMs + 10 - Date.now();
  if (left > 0) await settle(left);
}

/** Notes when the last run begins s5 (resumed) and when the first and last begin s6 (s5 recorded). */
function restartProbe(runs: number) {
  const done = deferred();
  const at = { allResumed: 0, firstRecorded: 0, allRecorded: 0, reran: 0 };
  let resumed = 0;
  let recorded = 0;
  onStep((i) => {
    if (i < IN_FLIGHT) {
      at.reran++; // a recorded step run again (neither engine should)
      return i;
    }
    if (i === IN_FLIGHT) {
      if (++resumed === runs) at.allResumed = performance.now();
      return i;
    }
    if (++recorded === 1) at.firstRecorded = performance.now();
    if (recorded === runs) {
      at.allRecorded = performance.now();
      done.resolve();
    }
    return never();
  });
  return { at, done: done.promise };
}

function figures(
  p: ReturnType<typeof restartProbe>,
  t0: number,
  cpu0: NodeJS.CpuUsage,
  runs: number,
  extra: Record<string, number>,
) {
  const cpu = process.cpuUsage(cpu0);
  if (p.at.reran) throw new Error(`${p.at.reran} recorded steps ran again`);
  const recordedMs = p.at.allRecorded - t0;
  return {
    recordedMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    resumedMs: p.at.allResumed - t0,
    firstMs: p.at.firstRecorded - t0,
    runsPerSec: (runs / recordedMs) * 1000,
    ...extra,
  };
}

async function measureRivet(
  runs: number,
  open: () => (i: number) => import("@rivetkit/workflow-engine").EngineDriver,
  t0Before: boolean,
) {
  const p = restartProbe(runs);
  let t0 = performance.now();
  let cpu0 = process.cpuUsage();
  const driverFor = open();
  if (!t0Before) {
    t0 = performance.now();
    cpu0 = process.cpuUsage();
  }
  for (let i = 0; i < runs; i++) void runWorkflow(runId(i), rivetInFlight, undefined, driverFor(i));
  await p.done;
  return figures(p, t0, cpu0, runs, {});
}

export const scenario: ScenarioModule = {
  prepare: {
    waymark: (s) => crash("waymark", s.template!, num(s.params, "runs")),
    "rivet-sqlite": (s) => crash("rivet-sqlite", s.template!, num(s.params, "runs")),
    async "rivet-mem"(s) {
      const runs = num(s.params, "runs");
      const hung = hangInFlight(runs);
      const drivers = new Map<string, RivetMemoryDriver>();
      for (let i = 0; i < runs; i++) {
        const driver = new RivetMemoryDriver();
        drivers.set(runId(i), driver);
        void runWorkflow(runId(i), rivetInFlight, undefined, driver);
      }
      await hung;
      RivetMemoryDriver.saveMany(s.template!, drivers);
    },
  },
  measure: {
    async waymark(spec) {
      const runs = num(spec.params, "runs");
      const copy = path.join(spec.dir, "r.db");
      copyDatabase(spec.template!, copy);
      await leasesLapsed(spec.template!);
      const p = restartProbe(runs);
      await profiler.start();
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const engine = (await registry.start({
        database: copy,
        durability: spec.durability as Durability,
        maxActiveRuns: runs,
      })) as unknown as Engine;
      const startMs = performance.now() - t0;
      await p.done;
      await profiler.stop();
      return figures(p, t0, cpu0, runs, { startMs, commits: engine.writes.commits });
    },
    "rivet-mem"(spec) {
      const drivers = RivetMemoryDriver.loadMany(spec.template!);
      return measureRivet(num(spec.params, "runs"), () => (i) => drivers.get(runId(i))!, false);
    },
    "rivet-sqlite"(spec) {
      const copy = path.join(spec.dir, "r.db");
      copyDatabase(spec.template!, copy);
      return measureRivet(
        num(spec.params, "runs"),
        () => {
          const store = new RivetSqlite(copy, spec.durability);
          return (i) => store.driver(runId(i));
        },
        true,
      );
    },
  },
};
