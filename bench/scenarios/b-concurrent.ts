// (b) Many runs of 10 steps at once. Waymark's group commit lets many runs' records share one
// transaction while each run still waits for its own; Rivet commits each run's writes on their own.

import path from "node:path";
import { runWorkflow } from "@rivetkit/workflow-engine";
import { type ChildSpec, num, rate, type ScenarioModule } from "../lib/common.js";
import { Floor } from "../lib/floor.js";
import { groupedWrites } from "../lib/floor-grouped.js";
import { rivetSeq, runConcurrently, startWaymark } from "../lib/workflows.js";
import { RivetMemoryDriver } from "../peers/rivet-memory.js";
import { RivetSqlite } from "../peers/rivet-sqlite.js";

export const scenario: ScenarioModule = {
  measure: {
    async waymark(spec: ChildSpec) {
      const runs = num(spec.params, "runs");
      const n = num(spec.params, "steps");
      const engine = await startWaymark(path.join(spec.dir, "b.db"), spec.durability);
      const { ms, commits } = await runConcurrently(engine, runs, n);
      await engine.close();
      return { ...rate(runs * n, ms), commits, stepsPerCommit: (runs * n) / commits };
    },
    async "rivet-mem"(spec) {
      const runs = num(spec.params, "runs");
      const n = num(spec.params, "steps");
      const t0 = performance.now();
      const results = await Promise.all(
        Array.from(
          { length: runs },
          (_, i) => runWorkflow(`r${i}`, rivetSeq, { n }, new RivetMemoryDriver()).result,
        ),
      );
      const ms = performance.now() - t0;
      if (results.some((r) => r.state !== "completed")) throw new Error("a rivet run did not complete");
      return rate(runs * n, ms);
    },
    async "rivet-sqlite"(spec) {
      const runs = num(spec.params, "runs");
      const n = num(spec.params, "steps");
      const store = new RivetSqlite(path.join(spec.dir, "b.db"), spec.durability);
      const t0 = performance.now();
      const results = await Promise.all(
        Array.from(
          { length: runs },
          (_, i) => runWorkflow(`r${i}`, rivetSeq, { n }, store.driver(`r${i}`)).result,
        ),
      );
      const ms = performance.now() - t0;
      if (results.some((r) => r.state !== "completed")) throw new Error("a rivet run did not complete");
      store.close();
      return rate(runs * n, ms);
    },
    async "floor-grouped"(spec) {
      const runs = num(spec.params, "runs");
      const n = num(spec.params, "steps");
      return rate(runs * n, await groupedWrites(path.join(spec.dir, "b.db"), spec.durability, runs, n));
    },
    async floor(spec) {
      const runs = num(spec.params, "runs");
      const n = num(spec.params, "steps");
      const floor = new Floor(path.join(spec.dir, "b.db"), spec.durability);
      const t0 = performance.now();
      // Step by step across runs, as concurrent runs interleave; one commit per step.
      for (let s = 1; s <= n; s++) for (let r = 1; r <= runs; r++) floor.step(r, s);
      const ms = performance.now() - t0;
      floor.close();
      return rate(runs * n, ms);
    },
  },
};
