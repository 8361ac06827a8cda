// The README's tracing example, run as it is written in a real Node process (only the collector's URL
// pointed at a receiver this test runs on loopback): a run's spans arrive over OTLP/HTTP in one trace,
// and a fetch inside a step that injects the active context sends that step's traceparent.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { tempDb } from "../helpers.js";
import { loopbackServer } from "./otel.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const README_URL = "http://127.0.0.1:4318/v1/traces";

/** The README's ```ts block that registers the SDK (the one with the OTLP exporter). */
function readmeExample(): string {
  const readme = fs.readFileSync(path.join(ROOT, "README.md"), "utf8");
  const blocks = [...readme.matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1]!);
  const found = blocks.filter((b) => b.includes("OTLPTraceExporter"));
  expect(found, "one README block with OTLPTraceExporter").toHaveLength(1);
  expect(found[0]).toContain(README_URL);
  return found[0]!;
}

let receiver: Awaited<ReturnType<typeof loopbackServer>>;
beforeAll(async () => {
  receiver = await loopbackServer("{}");
});
afterAll(() => receiver.close());

describe("README tracing example", () => {
  it("runs as written: spans reach the collector in one trace; an injected fetch carries the step's context", async () => {
    const app = `
const { setup, workflow } = await import("./src/index.ts");
const hello = workflow({
  run: async (ctx) =>
    ctx.step("greet", async () => {
      const headers = {};
      propagation.inject(context.active(), headers);
      await fetch(${JSON.stringify(`${receiver.url}/api`)}, { headers });
      return "hi";
    }),
});
const engine = await setup({ use: { hello } }).start({ database: ${JSON.stringify(tempDb())} });
await (await engine.getOrCreate("hello", "h-1")).result({ timeout: 20000 });
await engine.close();
await provider.shutdown();
`;
    const code = readmeExample().replace(README_URL, `${receiver.url}/v1/traces`) + app;
    const child = spawn(process.execPath, ["--import", "tsx", "--input-type=module", "-e", code], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const exitCode = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
    expect(exitCode, stderr).toBe(0);

    type Span = { traceId: string; spanId: string; parentSpanId?: string; name: string };
    const spans: Span[] = receiver.requests
      .filter((r) => r.url === "/v1/traces")
      .flatMap((r) =>
        (
          JSON.parse(r.body) as { resourceSpans: Array<{ scopeSpans: Array<{ spans: Span[] }> }> }
        ).resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)),
      );
    expect(spans.map((s) => s.name).sort()).toEqual(["run hello", "start hello", "step greet"]);
    expect(new Set(spans.map((s) => s.traceId)).size).toBe(1);
    const step = spans.find((s) => s.name === "step greet")!;
    const api = receiver.requests.find((r) => r.url === "/api");
    expect(api?.headers.traceparent).toBe(`00-${step.traceId}-${step.spanId}-01`);
  });
});
