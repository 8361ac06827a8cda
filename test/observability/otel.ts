// The OpenTelemetry SDK registered for a test file: a tracer provider exporting to memory (or any exporter),
// AsyncLocalStorage context, and helpers to read the finished spans as a tree.

import http from "node:http";
import type { AddressInfo } from "node:net";
import { type Context, context, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
  type SpanExporter,
} from "@opentelemetry/sdk-trace-base";

/** Registers a tracer provider exporting to `exporter` (in memory by default); `unregister` undoes it. */
export function registerTracing(exporter: SpanExporter = new InMemorySpanExporter()) {
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  trace.setGlobalTracerProvider(provider);
  return {
    exporter,
    provider,
    async unregister() {
      await provider.shutdown();
      trace.disable();
      context.disable();
    },
  };
}

/** Milliseconds of an OpenTelemetry HrTime duration. */
export function ms(time: [number, number]): number {
  return time[0] * 1000 + time[1] / 1e6;
}

/** The spans whose parent is `parent`. */
export function childrenOf(spans: ReadableSpan[], parent: ReadableSpan): ReadableSpan[] {
  return spans.filter((s) => s.parentSpanContext?.spanId === parent.spanContext().spanId);
}

/** The traceparent header of the span active in `ctx`, as an instrumented HTTP client would send it. */
export function traceparentHeader(ctx: Context = context.active()): string {
  const sc = trace.getSpanContext(ctx);
  if (!sc) throw new Error("no active span");
  return `00-${sc.traceId}-${sc.spanId}-0${sc.traceFlags & 1}`;
}

/** A loopback HTTP server answering every request with 200 and `reply`, remembering each request. */
export async function loopbackServer(reply = "{}") {
  const requests: Array<{ url: string; headers: http.IncomingHttpHeaders; body: string }> = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      requests.push({
        url: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      res.writeHead(200, { "content-type": "application/json" });
      res.end(reply);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
