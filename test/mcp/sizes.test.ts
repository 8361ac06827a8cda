// Every tool's answer size in characters on a small database (written to test-artifacts/ for the report),
// and on a database with large values: none passes the budget.

import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { setup, workflow } from "../../src/index.js";
import { MAX_ANSWER_CHARS } from "../../src/mcp/budget.js";
import { Closer, call, connect, ROOT, startEngine, tempDb, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

test("answer sizes of every tool stay within the budget", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  for (let i = 1; i <= 3; i++) await engine.getOrCreate("approval", `inv-${i}`, { amount: 100 * i });
  await engine.getOrCreate("flaky", "f-1");
  await engine.getOrCreate("flaky", "big", { size: 100_000 });
  await engine.getOrCreate("sleeper", "s-1");
  await engine.getOrCreate("sleeper", "s-2");
  await until(async () => {
    const page = await engine.listRuns({ status: ["pending", "running"] });
    return page.runs.length === 0;
  }, "runs to settle");
  const client = await connect(closer, engine);
  const calls: Array<[string, Record<string, unknown>]> = [
    ["list_workflows", {}],
    ["list_runs", {}],
    ["get_run", { workflow: "flaky", key: "f-1" }],
    ["get_run (100 KB values)", { workflow: "flaky", key: "big" }],
    ["get_history", { workflow: "flaky", key: "f-1" }],
    ["get_history (100 KB values)", { workflow: "flaky", key: "big" }],
    ["get_step", { workflow: "flaky", key: "f-1", step: "charge" }],
    ["compare_runs", { workflow: "approval", key: "inv-1", otherKey: "inv-2" }],
    ["compare_runs (100 KB values)", { workflow: "flaky", key: "big", otherKey: "f-1" }],
    ["get_step (100 KB values)", { workflow: "flaky", key: "big", step: "load" }],
    [
      "send_message",
      {
        workflow: "approval",
        key: "inv-1",
        queue: "decisions",
        body: { approve: true, by: "ann" },
        idempotencyKey: "k1",
      },
    ],
    ["start_run", { workflow: "sleeper", key: "s-3" }],
    ["cancel_run", { workflow: "sleeper", key: "s-2" }],
    ["call_action", { workflow: "approval", key: "inv-2", action: "getState" }],
    ["wait_for_run", { workflow: "approval", key: "inv-1", until: "finished", timeoutSeconds: 20 }],
    ["replay_run", { workflow: "flaky", key: "f-1", dryRun: true }],
    ["get_run (error: unknown run)", { workflow: "flaky", key: "nope" }],
  ];
  const sizes: Record<string, number> = {};
  for (const [label, args] of calls) {
    const name = label.split(" ")[0]!;
    const r = await call(client, name, args);
    expect(Boolean(r.isError), label).toBe(label.includes("error"));
    sizes[label] = JSON.stringify(r).length;
    expect(sizes[label], label).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
  }
  const dir = path.join(ROOT, "test-artifacts");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "mcp-answer-sizes.json"), `${JSON.stringify(sizes, null, 2)}\n`);
  process.stderr.write(`MCP answer sizes (characters): ${JSON.stringify(sizes, null, 2)}\n`);
});

test("a step whose every attempt failed with a 30 KB message stays within the budget, the cut said", async () => {
  const noisy = workflow({
    run: async (ctx) => {
      await ctx.step(
        "explode",
        async () => {
          throw new Error(`upstream said: ${"<html>".repeat(5_000)}`);
        },
        { retries: 24, backoff: { initial: 1, max: 5 } },
      );
    },
  });
  const engine = (await setup({ use: { noisy } }).start({ database: tempDb(closer) })) as unknown as Engine;
  closer.add(() => engine.close());
  const run = await engine.getOrCreate("noisy", "n-1");
  await until(async () => (await run.status()) === "failed", "the run to fail after 25 attempts");
  const client = await connect(closer, engine);
  for (const tool of ["get_step", "get_run", "get_history", "diagnose_run"]) {
    const r = await call(client, tool, { workflow: "noisy", key: "n-1", step: "explode" });
    expect(r.isError, tool).toBeFalsy();
    expect(JSON.stringify(r).length, tool).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
  }
  const step = await call(client, "get_step", { workflow: "noisy", key: "n-1", step: "explode" });
  const attempts = step.structuredContent!.attempts as Array<{ n: number; error: { message: string } }>;
  expect(attempts[0]!.n).toBe(1);
  expect(attempts.at(-1)!.n).toBe(25);
  expect(attempts.length + Number(step.structuredContent!.attemptsOmitted ?? 0)).toBe(25);
  expect(attempts[0]!.error.message).toMatch(/more characters: waymark:\/\/runs\/noisy\/n-1\/steps\/\d+\]$/);
  expect(step.content.some((c) => c.type === "resource_link")).toBe(true);
});
