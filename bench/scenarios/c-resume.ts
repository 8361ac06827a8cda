// (c) Resume of a run with n recorded steps: from starting the engine (Waymark) or calling runWorkflow
// (Rivet) on the stored run until its first new step begins, i.e. load and replay the whole history.
// The floor opens the database and reads the run's n entry rows.

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
} from "../lib/endless.js";
import { startWaymark } from "../lib/workflows.js";

export const scenario: ScenarioModule = {
  prepare: {
    waymark: (s) => buildWaymark(s.template!, num(s.params, "recorded")),
    "rivet-mem": (s) => buildRivetMem(s.template!, num(s.params, "recorded")),
    "rivet-sqlite": (s) => buildRivetSqlite(s.template!, num(s.params, "recorded")),
    floor: (s) => buildFloor(s.template!, num(s.params, "recorded")),
  },
  measure: {
    async waymark(spec) {
      const n = num(spec.params, "recorded");
      const copy = path.join(spec.dir, "c.db");
      copyDatabase(spec.template!, copy);
      const p = probe([n]);
      await profiler.start();
      const t0 = performance.now();
      await startWaymark(copy, spec.durability);
      await p.done;
      await profiler.stop();
      return { resumeMs: p.at.get(n)! - t0 };
    },
    async "rivet-mem"(spec) {
      const n = num(spec.params, "recorded");
      const driver = RivetMemoryDriver.load(spec.template!);
      const p = probe([n]);
      const t0 = performance.now();
      resumeRivet(driver);
      await p.done;
      return { resumeMs: p.at.get(n)! - t0 };
    },
    async "rivet-sqlite"(spec) {
      const n = num(spec.params, "recorded");
      const copy = path.join(spec.dir, "c.db");
      copyDatabase(spec.template!, copy);
      const p = probe([n]);
      const t0 = performance.now();
      resumeRivet(new RivetSqlite(copy, spec.durability).driver(RUN_ID));
      await p.done;
      return { resumeMs: p.at.get(n)! - t0 };
    },
    async floor(spec) {
      const n = num(spec.params, "recorded");
      const copy = path.join(spec.dir, "c.db");
      copyDatabase(spec.template!, copy);
      const t0 = performance.now();
      const floor = new Floor(copy, spec.durability);
      const rows = floor.load(1);
      const ms = performance.now() - t0;
      if (rows.length !== n) throw new Error(`floor read ${rows.length} rows, expected ${n}`);
      return { resumeMs: ms };
    },
  },
};
