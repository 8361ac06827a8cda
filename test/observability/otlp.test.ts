// Spans exported over OTLP/HTTP (the OpenTelemetry SDK's exporter, as an application would set it up) to a
// receiver this test runs on loopback: what arrives is a run's trace, with its structure and errors.

import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb, until } from "../helpers.js";
import { loopbackServer, registerTracing } from "./otel.js";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{
    key: string;
    value: { stringValue?: string; intValue?: number | string; boolValue?: boolean };
  }>;
  events?: Array<{ name: string; attributes: Array<{ key: string; value: { stringValue?: string } }> }>;
  status?: { code?: number; message?: string };
}

let receiver: Awaited<ReturnType<typeof loopbackServer>>;
let otel: ReturnType<typeof registerTracing>;
beforeAll(async () => {
  receiver = await loopbackServer("{}");
  otel = registerTracing(new OTLPTraceExporter({ url: `${receiver.url}/v1/traces` }));
});
afterAll(async () => {
  await otel.unregister();
  await receiver.close();
});

/** Every span the receiver got, from the OTLP/JSON bodies posted to /v1/traces. */
function received(): OtlpSpan[] {
  return receiver.requests
    .filter((r) => r.url === "/v1/traces")
    .flatMap((r) => {
      const body = JSON.parse(r.body) as {
        resourceSpans: Array<{ scopeSpans: Array<{ scope: { name: string }; spans: OtlpSpan[] }> }>;
      };
      return body.resourceSpans.flatMap((rs) =>
        rs.scopeSpans.filter((ss) => ss.scope.name === "waymark").flatMap((ss) => ss.spans),
      );
    });
}

const attr = (s: OtlpSpan, key: string) => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  return v?.stringValue ?? (v?.intValue !== undefined ? Number(v.intValue) : v?.boolValue);
};

describe("OTLP/HTTP export", () => {
  it("a run's spans reach a collector on loopback: one trace, attempts under their execution, the error", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    let calls = 0;
    const sync = workflow({
      run: async (ctx) => {
        await ctx.step(
          "pull",
          () => {
            calls++;
            if (calls === 1) throw new Error("upstream 503");
            return calls;
          },
          { retries: 1, backoff: { initial: 500, jitter: false } },
        );
        await ctx.sleep("pause", "10s");
        return "synced";
      },
    });
    const engine = closeLater(await setup({ use: { sync } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("sync", "s-1");
    await until(async () => (await run.status()) === "retrying", "the retry");
    clock.advance(500);
    await engine.tick();
    await until(async () => (await run.status()) === "sleeping", "the sleep");
    clock.advance(10_000);
    expect(await run.result({ timeout: 5000 })).toBe("synced");
    await otel.provider.forceFlush();
    await until(() => received().some((s) => s.name === "sleep pause"), "the sleep's span to arrive");

    const spans = received();
    expect(receiver.requests[0]!.headers["content-type"]).toMatch(/application\/json/);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const start = spans.find((s) => s.name === "start sync")!;
    const executions = spans.filter((s) => s.name === "run sync");
    expect(executions.map((e) => attr(e, "waymark.run.status")).sort()).toEqual([
      "completed",
      "retrying",
      "sleeping",
    ]);
    for (const e of executions) expect(e.parentSpanId).toBe(start.spanId);
    const attempts = spans.filter((s) => s.name === "step pull");
    expect(attempts.map((a) => attr(a, "waymark.step.attempt")).sort()).toEqual([1, 2]);
    for (const a of attempts) expect(executions.map((e) => e.spanId)).toContain(a.parentSpanId);
    const failed = attempts.find((a) => attr(a, "waymark.step.attempt") === 1)!;
    expect(failed.status).toMatchObject({ code: 2, message: "upstream 503" });
    const exception = failed.events!.find((e) => e.name === "exception")!;
    expect(exception.attributes.find((a) => a.key === "exception.message")?.value.stringValue).toBe(
      "upstream 503",
    );
    expect(attr(spans.find((s) => s.name === "sleep pause")!, "waymark.run.key")).toBe("s-1");
  });
});
