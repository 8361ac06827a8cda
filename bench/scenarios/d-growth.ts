// (d) Per-step cost with `recorded` entries already in the run's history: resume a template run, let
// `warm` new steps pass, then time the next `window` steps. Run at 1,000 and 100,000 recorded entries,
// the cost must stay flat. The floor times single-row commits into a table already holding the rows.

import path from "node:path";
import { copyDatabase, num, profiler, type ScenarioModule } from "../lib/common.js";
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

function window(spec: { params: Record<string, number | string> }) {
  const n = num(spec.params, "recorded");
  const from = n + num(spec.params, "warm");
  const to = from + num(spec.params, "window");
  return { from, to, p: probe([from, to]) };
}

const perStep = (at: Map<number, number>, from: number, to: number) => ({
  usPerStep: ((at.get(to)! - at.get(from)!) * 1000) / (to - from),
});

export const scenario: ScenarioModule = {
  prepare: {
    waymark: (s) => buildWaymark(s.template!, num(s.params, "recorded")),
    "rivet-mem": (s) => buildRivetMem(s.template!, num(s.params, "recorded")),
    "rivet-sqlite": (s) => buildRivetSqlite(s.template!, num(s.params, "recorded")),
    floor: (s) => buildFloor(s.template!, num(s.params, "recorded")),
  },
  measure: {
    async waymark(spec) {
      const { from, to, p } = window(spec);
      const warmedUp = new Promise<void>((resolve) => {
        const check = () => (p.at.has(from) ? resolve() : setTimeout(check, 1));
        check();
      });
      await resumeWaymark(spec.template!, path.join(spec.dir, "d.db"), spec.durability);
      await warmedUp;
      await profiler.start();
      await p.done;
      await profiler.stop();
      return perStep(p.at, from, to);
    },
    async "rivet-mem"(spec) {
      const { from, to, p } = window(spec);
      resumeRivet(RivetMemoryDriver.load(spec.template!));
      await p.done;
      return perStep(p.at, from, to);
    },
    async "rivet-sqlite"(spec) {
      const { from, to, p } = window(spec);
      const copy = path.join(spec.dir, "d.db");
      copyDatabase(spec.template!, copy);
      resumeRivet(new RivetSqlite(copy, spec.durability).driver(RUN_ID));
      await p.done;
      return perStep(p.at, from, to);
    },
    async floor(spec) {
      const n = num(spec.params, "recorded");
      const warm = num(spec.params, "warm");
      const count = num(spec.params, "window");
      const copy = path.join(spec.dir, "d.db");
      copyDatabase(spec.template!, copy);
      const floor = new Floor(copy, spec.durability);
      for (let i = 1; i <= warm; i++) floor.step(1, n + i);
      const t0 = performance.now();
      for (let i = 1; i <= count; i++) floor.step(1, n + warm + i);
      const ms = performance.now() - t0;
      floor.close();
      return { usPerStep: (ms * 1000) / count };
    },
  },
};
