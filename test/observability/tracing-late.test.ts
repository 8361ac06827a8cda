// Without a tracer provider an execution makes no spans at all (issue 21: a step's no-op span, its context and
// strings were allocations on every step). Whether one is registered is asked per execution, so a provider the
// application registers after the engine started traces the runs executed from then on.

import type { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterEach, expect, test } from "vitest";
import { setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { registerTracing } from "./otel.js";

let otel: ReturnType<typeof registerTracing> | null = null;
afterEach(async () => {
  await otel?.unregister();
  otel = null;
});

test("runs executed before a provider is registered store no trace; runs after it are traced", async () => {
  const order = workflow({
    run: async (ctx) => {
      await ctx.step("a", () => 1);
      return ctx.step("b", () => 2);
    },
  });
  const engine = closeLater(await setup({ use: { order } }).start({ database: tempDb() }));

  const before = await engine.getOrCreate("order", "before");
  expect(await before.result()).toBe(2);
  expect((await engine.getRun(before))?.traceContext).toBeNull();

  otel = registerTracing();
  const after = await engine.getOrCreate("order", "after");
  expect(await after.result()).toBe(2);
  const spans = (otel.exporter as InMemorySpanExporter).getFinishedSpans();
  expect(spans.map((s) => s.name).sort()).toEqual(["run order", "start order", "step a", "step b"]);
  const stored = (await engine.getRun(after))?.traceContext;
  expect(stored).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
  expect(stored).toContain(spans[0]!.spanContext().traceId);
});
