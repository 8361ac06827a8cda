// The same numbers through @opentelemetry/api metrics when the application registers a meter provider
// (the OpenTelemetry metrics SDK with a reader collected on demand).

import { metrics } from "@opentelemetry/api";
import { MeterProvider, MetricReader, type ResourceMetrics } from "@opentelemetry/sdk-metrics";
import { afterAll, beforeAll, expect, it } from "vitest";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";

/** A reader collected by the test when it wants (no timer, no exporter). */
class OnDemandReader extends MetricReader {
  protected async onForceFlush(): Promise<void> {}
  protected async onShutdown(): Promise<void> {}
}

const reader = new OnDemandReader();
const provider = new MeterProvider({ readers: [reader] });
beforeAll(() => {
  metrics.setGlobalMeterProvider(provider);
});
afterAll(async () => {
  await provider.shutdown();
  metrics.disable();
});

/** Data points of one instrument: attributes and value (a sum's or gauge's number, a histogram's count). */
async function points(name: string): Promise<Array<{ attributes: Record<string, unknown>; value: number }>> {
  const { resourceMetrics } = (await reader.collect()) as { resourceMetrics: ResourceMetrics };
  const metric = resourceMetrics.scopeMetrics
    .filter((s) => s.scope.name === "waymark")
    .flatMap((s) => s.metrics)
    .find((m) => m.descriptor.name === name);
  return (metric?.dataPoints ?? []).map((p) => ({
    attributes: p.attributes,
    value: typeof p.value === "number" ? p.value : (p.value as { count: number }).count,
  }));
}

it("counts steps, times attempts and reads run counts from the store through the global meter provider", async () => {
  const clock = new FakeClock(Date.UTC(2026, 0, 1));
  let calls = 0;
  const job = workflow({
    run: async (ctx) => {
      await ctx.step(
        "flaky",
        () => {
          calls++;
          if (calls === 1) throw new Error("first try fails");
        },
        { retries: 1, backoff: { initial: 100, jitter: false } },
      );
      await ctx.step("done", () => "ok");
    },
  });
  const engine = closeLater(await setup({ use: { job } }).start({ database: tempDb(), clock }));
  const run = await engine.getOrCreate("job", "j-1");
  clock.advance(100);
  await run.result({ timeout: 5000 });

  expect(await points("waymark.steps.completed")).toEqual([{ attributes: { workflow: "job" }, value: 2 }]);
  expect(await points("waymark.step.attempts.failed")).toEqual([
    { attributes: { workflow: "job" }, value: 1 },
  ]);
  const durations = await points("waymark.step.duration");
  expect(durations.find((p) => p.attributes.outcome === "completed")?.value).toBe(2);
  expect(durations.find((p) => p.attributes.outcome === "failed")?.value).toBe(1);
  const runs = await points("waymark.runs");
  expect(runs.find((p) => p.attributes.status === "completed")).toEqual({
    attributes: { workflow: "job", status: "completed" },
    value: 1,
  });
  expect((await points("waymark.commit.duration"))[0]!.value).toBeGreaterThan(0);
  expect(await points("waymark.leases.held")).toEqual([{ attributes: {}, value: 0 }]);
});
