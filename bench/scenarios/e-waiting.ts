// (e) Many runs waiting for a message: the time to create them (until every one waits), the memory they
// hold once waiting (RSS over the idle process, after a full GC), and the time to deliver one message to
// each (until every one completed). Run with --expose-gc.
//
// Rivet's host side is written here as its engine expects: in "yield" mode a waiting run returns and holds
// nothing but its stored history; a message is added to its queue and the run is executed again.

import path from "node:path";
import { runWorkflow } from "@rivetkit/workflow-engine";
import {
  type ChildSpec,
  deferred,
  gc,
  type Metrics,
  num,
  pool,
  profiler,
  type ScenarioModule,
  settle,
} from "../lib/common.js";
import { Floor } from "../lib/floor.js";
import { rivetWaiter, startWaymark } from "../lib/workflows.js";
import { RivetMemoryDriver } from "../peers/rivet-memory.js";
import { RivetSqlite } from "../peers/rivet-sqlite.js";

const WIDTH = 1000;

async function memory(): Promise<NodeJS.MemoryUsage> {
  await gc();
  await settle(300);
  await gc();
  return process.memoryUsage();
}

function figures(
  runs: number,
  createMs: number,
  deliverMs: number,
  base?: NodeJS.MemoryUsage,
  after?: NodeJS.MemoryUsage,
): Metrics {
  const out: Metrics = {
    runs,
    createMs,
    createPerSec: (runs / createMs) * 1000,
    deliverMs,
    deliverPerSec: (runs / deliverMs) * 1000,
  };
  if (base && after) {
    out.rssMB = (after.rss - base.rss) / 2 ** 20;
    out.heapMB = (after.heapUsed - base.heapUsed) / 2 ** 20;
    out.heapTotalMB = (after.heapTotal - base.heapTotal) / 2 ** 20;
  }
  return out;
}

async function rivet(
  spec: ChildSpec,
  driverFor: (i: number) => import("@rivetkit/workflow-engine").EngineDriver,
) {
  const runs = num(spec.params, "runs");
  const base = await memory();
  const t0 = performance.now();
  await pool(runs, WIDTH, async (i) => {
    const r = await runWorkflow(`w${i}`, rivetWaiter, undefined, driverFor(i)).result;
    if (r.state !== "sleeping") throw new Error(`run w${i} is ${r.state}, expected to wait`);
  });
  const createMs = performance.now() - t0;
  const after = await memory();
  const t1 = performance.now();
  await pool(runs, WIDTH, async (i) => {
    const driver = driverFor(i);
    await driver.messageDriver.addMessage({ id: `m${i}`, name: "m", data: { n: i }, sentAt: Date.now() });
    const r = await runWorkflow(`w${i}`, rivetWaiter, undefined, driver).result;
    if (r.state !== "completed") throw new Error(`run w${i} is ${r.state} after its message`);
  });
  return figures(runs, createMs, performance.now() - t1, base, after);
}

export const scenario: ScenarioModule = {
  measure: {
    async waymark(spec) {
      const runs = num(spec.params, "runs");
      const engine = await startWaymark(path.join(spec.dir, "e.db"), spec.durability);
      const base = await memory();
      const waiting = deferred();
      const completed = deferred();
      let nWaiting = 0;
      let nCompleted = 0;
      engine.on((e) => {
        if (e.type !== "run") return;
        if (e.status === "waiting" && ++nWaiting === runs) waiting.resolve();
        if (e.status === "completed" && ++nCompleted === runs) completed.resolve();
      });
      const ids: number[] = new Array(runs);
      await profiler.start();
      const t0 = performance.now();
      await pool(runs, WIDTH, async (i) => {
        ids[i] = (await engine.getOrCreate("waiter", `w${i}`)).id;
      });
      await waiting.promise;
      const createMs = performance.now() - t0;
      const after = await memory();
      const t1 = performance.now();
      await pool(runs, WIDTH, async (i) => {
        await engine.send(ids[i]!, "m", { n: i });
      });
      await completed.promise;
      const deliverMs = performance.now() - t1;
      await profiler.stop();
      await engine.close();
      return figures(runs, createMs, deliverMs, base, after);
    },
    "rivet-mem": (spec) => {
      const drivers: RivetMemoryDriver[] = [];
      return rivet(spec, (i) => (drivers[i] ??= new RivetMemoryDriver()));
    },
    async "rivet-sqlite"(spec) {
      const store = new RivetSqlite(path.join(spec.dir, "e.db"), spec.durability);
      const result = await rivet(spec, (i) => store.driver(`w${i}`));
      store.close();
      return result;
    },
    async floor(spec) {
      const runs = num(spec.params, "runs");
      const floor = new Floor(path.join(spec.dir, "e.db"), spec.durability);
      const ids: number[] = new Array(runs);
      const t0 = performance.now();
      for (let i = 0; i < runs; i++) ids[i] = floor.createRun(`w${i}`);
      const createMs = performance.now() - t0;
      const t1 = performance.now();
      for (let i = 0; i < runs; i++) floor.updateRun(ids[i]!);
      const deliverMs = performance.now() - t1;
      floor.close();
      return figures(runs, createMs, deliverMs);
    },
  },
};
