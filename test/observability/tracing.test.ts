// Traces with the OpenTelemetry SDK registered: one run is one trace across an engine restart, with a span per
// execution, per step attempt (errors as exception events) and per wait, and the application's own spans
// (a fetch made inside a step) under the attempt that made them.

import { SpanStatusCode, trace } from "@opentelemetry/api";
import type { InMemorySpanExporter, ReadableSpan } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Engine } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, onCleanup, tempDb, until } from "../helpers.js";
import { childrenOf, loopbackServer, ms, registerTracing, traceparentHeader } from "./otel.js";

let otel: ReturnType<typeof registerTracing>;
beforeAll(() => {
  otel = registerTracing();
});
afterAll(() => otel.unregister());
beforeEach(() => (otel.exporter as InMemorySpanExporter).reset());

const spans = () => (otel.exporter as InMemorySpanExporter).getFinishedSpans();
const named = (name: string) => spans().filter((s) => s.name === name);
const one = (name: string): ReadableSpan => {
  const found = named(name);
  expect(found, `spans named "${name}"`).toHaveLength(1);
  return found[0]!;
};
const id = (s: ReadableSpan) => s.spanContext().spanId;
const parentOf = (s: ReadableSpan) => s.parentSpanContext?.spanId;

describe("traces", () => {
  it("one run is one trace across a restart: executions, attempts with their errors, waits, a fetch in a step, a child run", async () => {
    const api = await loopbackServer('{"rate":0.2}');
    onCleanup(api.close);
    const app = trace.getTracer("the-app");
    const db = tempDb();
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    let calls = 0;
    const invoice = workflow({
      run: async (ctx) => {
        const rate = await ctx.step(
          "charge",
          async () => {
            calls++;
            if (calls === 1) throw new Error("card declined");
            // What an instrumented fetch does: a client span under the active context, its traceparent sent.
            return app.startActiveSpan("GET /tax", async (span) => {
              const res = await fetch(`${api.url}/tax`, { headers: { traceparent: traceparentHeader() } });
              span.end();
              return ((await res.json()) as { rate: number }).rate;
            });
          },
          { retries: 2, backoff: { initial: 1000, jitter: false } },
        );
        await ctx.sleep("cool-off", "1h");
        await ctx.step("notify", () => "sent");
        return ctx.child("receipt", "receipt", { key: `r-${ctx.key}`, input: { rate } });
      },
    });
    const receipt = workflow({
      run: async (ctx, input: { rate: number }) => ctx.step("print", () => input.rate),
    });
    const registry = setup({ use: { invoice, receipt } });

    const first = await registry.start({ database: db, clock, ownerId: "first" });
    // The run is started inside a request of the application: its trace is the request's.
    const request = app.startSpan("POST /invoices");
    const run = await trace
      .getTracer("the-app")
      .startActiveSpan("POST /invoices (handler)", async (handler) => {
        const h = await first.getOrCreate("invoice", "inv-1");
        handler.end();
        return h;
      });
    request.end();
    await until(async () => (await run.status()) === "retrying", "the first attempt to fail");
    clock.advance(1000);
    await first.tick();
    await until(async () => (await run.status()) === "sleeping", "the sleep");
    await first.close();

    const second = closeLater(await registry.start({ database: db, clock, ownerId: "second" }));
    clock.advance(60 * 60_000);
    await second.tick();
    const h2 = await second.get("invoice", "inv-1");
    expect(await h2.result({ timeout: 5000 })).toBe(0.2);

    const handler = one("POST /invoices (handler)");
    const traceId = handler.spanContext().traceId;
    // One trace: every span of the run, the application's fetch span included.
    const ours = spans().filter((s) => s.name !== "POST /invoices");
    expect(new Set(ours.map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));

    const start = one("start invoice");
    expect(parentOf(start)).toBe(id(handler));
    const row = await (second as unknown as Engine).store.findRun("invoice", "inv-1");
    expect(row!.traceContext).toBe(`00-${traceId}-${id(start)}-01`);

    // Executions, each from claim to suspend or finish, each a child of the run's stored context: the retry,
    // the sleep, then the second engine's (waiting for the child, if it suspended before the child ended).
    const executions = named("run invoice").sort((a, b) => ms(a.startTime) - ms(b.startTime));
    const shown = executions.map((e) => [e.attributes["waymark.run.status"], e.attributes["waymark.owner"]]);
    expect(shown.slice(0, 2)).toEqual([
      ["retrying", "first"],
      ["sleeping", "first"],
    ]);
    expect(shown.slice(2)).toEqual(
      shown.length === 3
        ? [["completed", "second"]]
        : [
            ["waiting", "second"],
            ["completed", "second"],
          ],
    );
    for (const e of executions) {
      expect(parentOf(e)).toBe(id(start));
      expect(e.attributes).toMatchObject({
        "waymark.workflow": "invoice",
        "waymark.run.key": "inv-1",
        "waymark.run.version": 1,
      });
    }
    const [exec1, exec2, exec3] = executions as [ReadableSpan, ReadableSpan, ReadableSpan];

    // The attempts: the first failed with its error as an exception event, under the first execution.
    const attempts = named("step charge").sort(
      (a, b) => Number(a.attributes["waymark.step.attempt"]) - Number(b.attributes["waymark.step.attempt"]),
    );
    expect(attempts.map((a) => parentOf(a))).toEqual([id(exec1), id(exec2)]);
    const [failed, passed] = attempts as [ReadableSpan, ReadableSpan];
    expect(failed.attributes).toMatchObject({
      "waymark.entry.path": "charge",
      "waymark.entry.kind": "step",
      "waymark.step.attempt": 1,
      "waymark.step.status": "failed",
      "waymark.step.will_retry": true,
    });
    expect(failed.status).toEqual({ code: SpanStatusCode.ERROR, message: "card declined" });
    const exception = failed.events.find((e) => e.name === "exception");
    expect(exception?.attributes?.["exception.message"]).toBe("card declined");
    expect(String(exception?.attributes?.["exception.stacktrace"])).toMatch(/card declined/);
    expect(passed.attributes).toMatchObject({
      "waymark.step.attempt": 2,
      "waymark.step.status": "completed",
    });
    expect(passed.status.code).not.toBe(SpanStatusCode.ERROR);

    // The fetch made inside the second attempt is its child, and the server got that span's context.
    const fetchSpan = one("GET /tax");
    expect(parentOf(fetchSpan)).toBe(id(passed));
    expect(api.requests.map((r) => r.headers.traceparent)).toEqual([`00-${traceId}-${id(fetchSpan)}-01`]);

    // The sleep: begun in the second execution, over in the third; one span for its whole hour.
    const sleep = one("sleep cool-off");
    expect(parentOf(sleep)).toBe(id(exec3));
    expect(ms(sleep.duration)).toBe(60 * 60_000);
    expect(sleep.attributes).toMatchObject({
      "waymark.entry.kind": "sleep",
      "waymark.wait.outcome": "completed",
    });
    expect(parentOf(one("step notify"))).toBe(id(exec3));

    // The child run, started by the third execution, is in the same trace; the wait for it is a span too.
    const childStart = one("start receipt");
    expect(parentOf(childStart)).toBe(id(exec3));
    expect(parentOf(one("run receipt"))).toBe(id(childStart));
    expect(parentOf(one("step print"))).toBe(id(one("run receipt")));
    expect(parentOf(one("child receipt"))).toBe(id(executions.at(-1)!));
    expect(
      childrenOf(spans(), exec3)
        .map((s) => s.name)
        .filter((n) => n !== "child receipt")
        .sort(),
    ).toEqual(["sleep cool-off", "start receipt", "step notify"]);
  });

  it("a failed run's execution records the error; a queue wait's span says how it ended", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const approval = workflow({
      queues: { decisions: z.object({ ok: z.boolean() }) },
      run: async (ctx) => {
        const first = await ctx.queue.next("await-decision", { queue: "decisions" });
        const late = await ctx.queue.next("await-second", { queue: "decisions", timeout: "1m" });
        await ctx.step(
          "refuse",
          () => {
            throw new Error(`refused after ${JSON.stringify([first, late])}`);
          },
          { retries: 0 },
        );
      },
    });
    const engine = closeLater(await setup({ use: { approval } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("approval", "a-1");
    await until(async () => (await run.status()) === "waiting", "the queue wait");
    await run.send("decisions", { ok: true });
    await until(
      async () => (await run.history()).some((e) => e.name === "await-second"),
      "the second wait to begin",
    );
    clock.advance(60_000);
    await engine.tick();
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(/refused/);
    expect(one("queue await-decision").attributes).toMatchObject({
      "waymark.queue": "decisions",
      "waymark.wait.outcome": "message",
    });
    const timedOut = one("queue await-second");
    expect(timedOut.attributes["waymark.wait.outcome"]).toBe("timed-out");
    expect(ms(timedOut.duration)).toBe(60_000);
    const last = named("run approval").find((e) => e.attributes["waymark.run.status"] === "failed")!;
    expect(last.status.code).toBe(SpanStatusCode.ERROR);
    expect(last.events.find((e) => e.name === "exception")?.attributes?.["exception.message"]).toMatch(
      /refused/,
    );
    expect(one("step refuse").attributes["waymark.step.will_retry"]).toBe(false);
  });

  it("a child run is part of its parent's trace: its start under the parent's execution, the wait for it a span", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const receipt = workflow({
      run: async (ctx, input: { n: number }) => ctx.step("print", () => input.n * 2),
    });
    const order = workflow({
      run: async (ctx) => {
        await ctx.step("total", () => 21);
        return ctx.child("receipt", "receipt", { key: `r-${ctx.key}`, input: { n: 21 } });
      },
    });
    const engine = closeLater(await setup({ use: { order, receipt } }).start({ database: tempDb(), clock }));
    expect(await (await engine.getOrCreate("order", "o-1")).result({ timeout: 5000 })).toBe(42);
    await until(() => named("child receipt").length === 1, "the child wait's span");

    const traceId = one("start order").spanContext().traceId;
    expect(new Set(spans().map((s) => s.spanContext().traceId))).toEqual(new Set([traceId]));
    const parentRuns = named("run order");
    const childStart = one("start receipt");
    expect(parentRuns.map(id)).toContain(parentOf(childStart));
    const childRun = one("run receipt");
    expect(parentOf(childRun)).toBe(id(childStart));
    expect(parentOf(one("step print"))).toBe(id(childRun));
    const wait = one("child receipt");
    expect(parentRuns.map(id)).toContain(parentOf(wait));
    expect(wait.attributes).toMatchObject({
      "waymark.entry.kind": "child",
      "waymark.wait.outcome": "completed",
    });
  });

  it("a start span only for a run really created, with the run's id; getOrCreate of an existing run opens none", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const noop = workflow({ run: async (ctx) => ctx.step("only", () => 1) });
    const engine = closeLater(await setup({ use: { noop } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("noop", "n-1");
    expect(await run.result({ timeout: 5000 })).toBe(1);
    await engine.getOrCreate("noop", "n-1");
    await engine.getOrCreate("noop", "n-1");
    expect(one("start noop").attributes).toMatchObject({
      "waymark.workflow": "noop",
      "waymark.run.key": "n-1",
      "waymark.run.id": run.id,
    });
  });
});
