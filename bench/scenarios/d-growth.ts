// (d) Per-step cost with `recorded` entries already in the run's history: resume a template run, let
// `warm` new steps pass, then time `windows` consecutive windows of `window` steps and keep the median
// window (a checkpoint or a GC pause lands in one window, not in the figure). Run at 1,000 and 100,000
// recorded entries, the cost must stay flat. The floor does the same with single-row commits into a table
// already holding the rows.

import path from "node:path";
import { copyDatabase, median, num, profiler, type ScenarioModule } from "../lib/common.js";
import {
  buildFloor,
  buildRivetMem,
  buildRivetSqlite,
  buildWaymark,
  Floor,
  probe,
  RivetMemoryDriver,
  RivetSqlite,
  RUN_ID,
  resumeRivet,
  resumeWaymark,
} from "../lib/endless.js";

/** The window boundaries after `recorded` + `warm` steps. */
function bounds(spec: { params: Record<string, number | string> }): number[] {
  const from = num(spec.params, "recorded") + num(spec.params, "warm");
  const size = num(spec.params, "window");
  return Array.from({ length: num(spec.params, "windows") + 1 }, (_, k) => from + k * size);
}

/** The median window's cost per step, in µs. */
function perStep(points: number[], at: Map<number, number>) {
  const size = points[1]! - points[0]!;
  const windows = points.slice(1).map((p, k) => ((at.get(p)! - at.get(points[k]!)!) * 1000) / size);
  return { usPerStep: median(windows) };
}

export const scenario: ScenarioModule = {
  prepare: {
    waymark: (s) => buildWaymark(s.template!, num(s.params, "recorded")),
    "rivet-mem": (s) => buildRivetMem(s.template!, num(s.params, "recorded")),
    "rivet-sqlite": (s) => buildRivetSqlite(s.template!, num(s.params, "recorded")),
    floor: (s) => buildFloor(s.template!, num(s.params, "recorded")),
  },
  measure: {
    async waymark(spec) {
      const points = bounds(spec);
      const p = probe(points, { at: points[0]!, open: () => profiler.start() });
      await resumeWaymark(spec.template!, path.join(spec.dir, "d.db"), spec.durability);
      await p.done;
      await profiler.stop();
      return perStep(points, p.at);
    },
    async "rivet-mem"(spec) {
      const points = bounds(spec);
      const p = probe(points);
      resumeRivet(RivetMemoryDriver.load(spec.template!));
      await p.done;
      return perStep(points, p.at);
    },
    async "rivet-sqlite"(spec) {
      const points = bounds(spec);
      const p = probe(points);
      const copy = path.join(spec.dir, "d.db");
      copyDatabase(spec.template!, copy);
      resumeRivet(new RivetSqlite(copy, spec.durability).driver(RUN_ID));
      await p.done;
      return perStep(points, p.at);
    },
    async floor(spec) {
      const n = num(spec.params, "recorded");
      const points = bounds(spec);
      const copy = path.join(spec.dir, "d.db");
      copyDatabase(spec.template!, copy);
      const floor = new Floor(copy, spec.durability);
      const at = new Map<number, number>();
      for (let seq = n + 1; seq <= points.at(-1)!; seq++) {
        if (seq - 1 >= points[0]! && points.includes(seq - 1)) at.set(seq - 1, performance.now());
        floor.step(1, seq);
      }
      at.set(points.at(-1)!, performance.now());
      floor.close();
      return perStep(points, at);
    },
  },
};
