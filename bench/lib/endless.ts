// Runs with a given number of recorded steps, for the resume (c) and history-growth (d) scenarios.
//
// A template is built once per subject (by the real engine, untimed): one run of the endless workflow whose
// first `recorded` steps completed and whose next step never returns, saved at that point. A measuring
// child copies the template, resumes the run, and times what it asks for through the step hook:
// `probe([a, b])` notes when step a and step b begin (step `recorded` is the first new one).

import { type EngineDriver, runWorkflow, type WorkflowContextInterface } from "@rivetkit/workflow-engine";
import { RivetMemoryDriver } from "../peers/rivet-memory.js";
import { RivetSqlite } from "../peers/rivet-sqlite.js";
import { copyDatabase, type Durability, deferred } from "./common.js";
import { Floor } from "./floor.js";
import { rivetEndless, setHook, startWaymark } from "./workflows.js";

export const RUN_ID = "one";

const never = () => new Promise<number>(() => {});

/** Makes the endless workflow record `recorded` steps and then hang in the next; resolves when it hangs. */
function hangAt(recorded: number): Promise<void> {
  const hung = deferred();
  setHook((i) => {
    if (i < recorded) return i;
    hung.resolve();
    return never();
  });
  return hung.promise;
}

/**
 * Notes when each of `points` begins (steps before the last return their index); the last hangs.
 * With `gate`, step `gate.at` first waits for `gate.open()` (e.g. starting a profiler) and its time is
 * noted after that, so the wait stays out of the windows.
 */
export function probe(
  points: number[],
  gate?: { at: number; open: () => Promise<void> },
): { at: Map<number, number>; done: Promise<void> } {
  const at = new Map<number, number>();
  const last = Math.max(...points);
  const wanted = new Set(points);
  const done = deferred();
  setHook((i) => {
    if (gate && i === gate.at) {
      return gate.open().then(() => {
        if (wanted.has(i)) at.set(i, performance.now());
        return i;
      });
    }
    if (wanted.has(i)) at.set(i, performance.now());
    if (i < last) return i;
    done.resolve();
    return never();
  });
  return { at, done: done.promise };
}

// ---- templates --------------------------------------------------------------------------------

export async function buildWaymark(template: string, recorded: number): Promise<void> {
  const hung = hangAt(recorded);
  const engine = await startWaymark(template, "normal");
  await engine.getOrCreate("endless", RUN_ID);
  await hung;
  await engine.close();
}

export async function buildRivetMem(template: string, recorded: number): Promise<void> {
  const driver = new RivetMemoryDriver();
  await buildRivetOn(driver, recorded);
  driver.save(template);
}

export async function buildRivetSqlite(template: string, recorded: number): Promise<void> {
  const store = new RivetSqlite(template, "normal");
  await buildRivetOn(store.driver(RUN_ID), recorded);
  store.close();
}

/**
 * Rivet's engine scans its whole history on every flush and looks each new name up in an array, so one run of
 * 100,000 flushed steps would take many minutes to build. The template run flushes every 1,000th step instead
 * (`ephemeral` only defers the write: the same entries are recorded, and the resumed code replays them).
 */
async function buildRivetOn(driver: EngineDriver, recorded: number): Promise<void> {
  const hung = deferred();
  const builder = async (ctx: WorkflowContextInterface): Promise<never> => {
    for (let i = 0; ; i++) {
      await ctx.step({
        name: `s${i}`,
        ephemeral: i % 1000 !== 999 && i !== recorded - 1,
        run: async () => {
          if (i < recorded) return i;
          hung.resolve();
          return never();
        },
      });
    }
  };
  void runWorkflow(RUN_ID, builder, undefined, driver);
  await hung.promise;
}

export async function buildFloor(template: string, recorded: number): Promise<void> {
  const floor = new Floor(template, "normal");
  for (let from = 1; from <= recorded; from += 10_000)
    floor.bulk(1, from, Math.min(10_000, recorded - from + 1));
  floor.close();
}

// ---- resuming ---------------------------------------------------------------------------------

/** Starts Waymark on a copy of the template: the engine claims the run and replays it. */
export async function resumeWaymark(template: string, copy: string, durability: Durability) {
  copyDatabase(template, copy);
  return startWaymark(copy, durability);
}

export function resumeRivet(driver: EngineDriver): void {
  void runWorkflow(RUN_ID, rivetEndless, undefined, driver);
}

export { Floor, RivetMemoryDriver, RivetSqlite };
