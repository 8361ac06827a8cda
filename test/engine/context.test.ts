// ctx's methods work when read off it: `const { step, sleep } = ctx` is how much user code is written.

import { expect, it } from "vitest";
import type { WorkflowContext } from "../../src/index.js";
import { restartWith } from "./restart-with.js";

it("ctx destructured: its methods and fields work on the first run and on a replay, in branches too", async () => {
  const seen: unknown[] = [];
  const code = async (ctx: WorkflowContext) => {
    const { step, sleep, join, version, broadcast, key, workflow, workflowVersion } = ctx;
    const a = await step("a", () => 1);
    const v = await version("v", 2);
    const both = await join("both", {
      left: async (branch) => {
        const { step: inner } = branch;
        return inner("in", () => a + 1);
      },
    });
    broadcast("noted", { a });
    seen.push({ a, v, left: both.left, key, workflow, workflowVersion, same: ctx.step === step });
    await sleep("nap", 1000);
    const b = await step("b", () => a + 10);
    return b;
  };
  const run = await restartWith(code, code);
  expect(await run.result({ timeout: 5000 })).toBe(11);
  expect(seen.length).toBeGreaterThanOrEqual(2);
  const first = { a: 1, v: 2, left: 2, key: "k", workflow: "wf", workflowVersion: 1, same: true };
  for (const s of seen) expect(s).toStrictEqual(first);
});

it("ctx spread into a helper's own object, and its keys: the methods and fields come along", async () => {
  const seen: unknown[] = [];
  const code = async (ctx: WorkflowContext) => {
    const mine = { ...ctx, tag: "t" };
    expect(await new Proxy(ctx, {}).step("proxied", () => "p")).toBe("p");
    const a = await mine.step("a", () => 1);
    const both = await mine.join("both", {
      left: async (branch) => {
        const inner = { ...branch };
        return inner.step("in", () => a + 1);
      },
    });
    seen.push({
      a,
      left: both.left,
      key: mine.key,
      state: mine.state,
      signal: mine.signal instanceof AbortSignal,
      keys: Object.keys(ctx).toSorted(),
    });
    await mine.sleep("nap", 1000);
    return mine.step("b", () => a + 10);
  };
  const run = await restartWith(code, code);
  expect(await run.result({ timeout: 5000 })).toBe(11);
  expect(seen.length).toBeGreaterThanOrEqual(2);
  const keys = [
    "broadcast",
    "child",
    "join",
    "key",
    "loop",
    "queue",
    "race",
    "removed",
    "rollbackCheckpoint",
    "signal",
    "sleep",
    "sleepUntil",
    "state",
    "step",
    "version",
    "workflow",
    "workflowVersion",
  ];
  for (const s of seen) expect(s).toStrictEqual({ a: 1, left: 2, key: "k", state: {}, signal: true, keys });
});

it("a ctx method replaced by a wrapper is called through it, on the first run and the replay", async () => {
  const wrapped: string[] = [];
  const code = async (ctx: WorkflowContext) => {
    const step = ctx.step;
    ctx.step = ((name: string, fn: () => unknown) => {
      wrapped.push(name);
      return step(name, fn);
    }) as WorkflowContext["step"];
    const a = await ctx.step("a", () => 1);
    await ctx.sleep("nap", 1000);
    return ctx.step("b", () => a + 1);
  };
  const run = await restartWith(code, code);
  expect(await run.result({ timeout: 5000 })).toBe(2);
  expect(wrapped.slice(0, 1)).toEqual(["a"]);
  expect(wrapped.slice(-2)).toEqual(["a", "b"]);
});

it("a method assigned on an object made from ctx shadows it there only: ctx keeps its own", async () => {
  const code = async (ctx: WorkflowContext) => {
    const logged: string[] = [];
    const derived = Object.create(ctx) as WorkflowContext;
    derived.step = ((name: string, fn: () => unknown) => {
      logged.push(name);
      return ctx.step(name, fn);
    }) as WorkflowContext["step"];
    const a = await derived.step("a", () => 1);
    await ctx.sleep("nap", 1000);
    const b = await ctx.step("b", () => a + 1);
    return { b, logged, own: Object.hasOwn(ctx, "step") };
  };
  const run = await restartWith(code, code);
  expect(await run.result({ timeout: 5000 })).toStrictEqual({ b: 2, logged: ["a"], own: true });
});
