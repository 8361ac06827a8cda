// (a) One run of n sequential trivial steps: each step waits for its own record, so every subject pays
// one commit per step (the floor shows what that commit alone costs).

import path from "node:path";
import { runWorkflow } from "@rivetkit/workflow-engine";
import { type ChildSpec, num, profiler, rate, type ScenarioModule } from "../lib/common.js";
import { Floor } from "../lib/floor.js";
import { rivetSeq, startWaymark } from "../lib/workflows.js";
import { RivetMemoryDriver } from "../peers/rivet-memory.js";
import { RivetSqlite } from "../peers/rivet-sqlite.js";

export const scenario: ScenarioModule = {
  measure: {
    async waymark(spec: ChildSpec) {
      const n = num(spec.params, "steps");
      const engine = await startWaymark(path.join(spec.dir, "a.db"), spec.durability);
      await profiler.start();
      const t0 = performance.now();
      const run = await engine.getOrCreate("seq", "one", { n });
      await run.result();
      const ms = performance.now() - t0;
      await profiler.stop();
      const commits = engine.writes.commits;
      await engine.close();
      return { ...rate(n, ms), commits };
    },
    async "rivet-mem"(spec) {
      const n = num(spec.params, "steps");
      const t0 = performance.now();
      const result = await runWorkflow("one", rivetSeq, { n }, new RivetMemoryDriver()).result;
      const ms = performance.now() - t0;
      if (result.state !== "completed") throw new Error(`rivet ended ${result.state}`);
      return rate(n, ms);
    },
    async "rivet-sqlite"(spec) {
      const n = num(spec.params, "steps");
      const store = new RivetSqlite(path.join(spec.dir, "a.db"), spec.durability);
      const t0 = performance.now();
      const result = await runWorkflow("one", rivetSeq, { n }, store.driver("one")).result;
      const ms = performance.now() - t0;
      if (result.state !== "completed") throw new Error(`rivet ended ${result.state}`);
      store.close();
      return rate(n, ms);
    },
    async floor(spec) {
      const n = num(spec.params, "steps");
      const floor = new Floor(path.join(spec.dir, "a.db"), spec.durability);
      const t0 = performance.now();
      for (let i = 1; i <= n; i++) floor.step(1, i);
      const ms = performance.now() - t0;
      floor.close();
      return rate(n, ms);
    },
  },
};
