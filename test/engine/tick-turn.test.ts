// engine.tick() in a loop that never yields (a test moving a FakeClock minute by minute): each tick lets the
// event loop turn first, so what the previous tick began commits before the next pass. Without it, once 20 ms
// pass without a turn (a loaded machine) commits wait for a turn that never comes, and a schedule with overlap
// "skip" finds its previous firing unfinished and skips the next.

import { expect, it } from "vitest";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";

const report = workflow({ run: async () => "reported" });

/** The machine is slow: this much wall time passes between the test's ticks (no turn of the loop). */
function busy(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

it("a schedule driven by tick() in a loop that never yields fires each firing, on a slow machine too", async () => {
  const clock = new FakeClock(Date.parse("2026-12-01T10:07:00Z"));
  const engine = closeLater(
    await setup({ use: { report }, schedules: { quarter: { workflow: "report", every: "15m" } } }).start({
      database: tempDb(),
      clock,
    }),
  );
  for (let t = Date.parse("2026-12-01T10:08:00Z"); t <= Date.parse("2026-12-01T11:00:00Z"); t += 60_000) {
    clock.set(t);
    busy(3);
    await engine.tick();
  }
  const runs = (await engine.listRuns()).runs;
  expect(runs.map((r) => r.key).sort()).toEqual([
    "quarter@2026-12-01T10:15:00.000Z",
    "quarter@2026-12-01T10:30:00.000Z",
    "quarter@2026-12-01T10:45:00.000Z",
    "quarter@2026-12-01T11:00:00.000Z",
  ]);
});
