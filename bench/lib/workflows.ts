// The trivial workflows every scenario runs, written once for Waymark and once for Rivet's engine.
// A step returns its index: the smallest record that is still a real value.

import type { WorkflowContextInterface } from "@rivetkit/workflow-engine";
import { z } from "zod";
import type { Engine } from "../../src/engine/engine.js";
import { setup, workflow } from "../../src/index.js";
import { type Durability, profiler } from "./common.js";

/**
 * What the endless workflow's step i does. Returning a value records it; returning a promise that never
 * settles leaves the run mid-step (how templates stop at an exact history length).
 */
export type StepHook = (i: number) => number | Promise<number>;
let hook: StepHook = (i) => i;
export function setHook(fn: StepHook): void {
  hook = fn;
}

/** n sequential steps. */
export const seq = workflow({
  run: async (ctx, input: { n: number }) => {
    for (let i = 0; i < input.n; i++) await ctx.step(`s${i}`, () => i);
    return input.n;
  },
});

/** Steps forever; `hook` decides what each one does (see setHook). */
export const endless = workflow({
  run: async (ctx) => {
    for (let i = 0; ; i++) await ctx.step(`s${i}`, () => hook(i));
  },
});

/** Waits for one message, then completes with it. */
export const waiter = workflow({
  queues: { m: z.object({ n: z.number() }) },
  run: async (ctx) => {
    const msg = await ctx.queue.next("wait", { queue: "m" });
    return msg.n;
  },
});

export const registry = setup({ use: { seq, endless, waiter } });

/**
 * Starts `runs` runs of `seq` (n steps each) at once and waits for all of them; times that (profiled).
 * The engine's commit count shows how many runs' records shared each transaction.
 */
export async function runConcurrently(
  engine: Pick<Engine, "getOrCreate" | "writes">,
  runs: number,
  n: number,
): Promise<{ ms: number; commits: number }> {
  await profiler.start();
  const t0 = performance.now();
  const handles = await Promise.all(
    Array.from({ length: runs }, (_, i) => engine.getOrCreate("seq", `r${i}`, { n })),
  );
  await Promise.all(handles.map((h) => h.result()));
  const ms = performance.now() - t0;
  await profiler.stop();
  return { ms, commits: engine.writes.commits };
}

export async function startWaymark(database: string, durability: Durability): Promise<Engine> {
  return (await registry.start({ database, durability })) as unknown as Engine;
}

// ---- Rivet's engine -------------------------------------------------------------------------

export async function rivetSeq(ctx: WorkflowContextInterface, input: { n: number }): Promise<number> {
  for (let i = 0; i < input.n; i++) await ctx.step(`s${i}`, async () => i);
  return input.n;
}

export async function rivetEndless(ctx: WorkflowContextInterface): Promise<never> {
  for (let i = 0; ; i++) await ctx.step(`s${i}`, async () => hook(i));
}

export async function rivetWaiter(ctx: WorkflowContextInterface): Promise<number> {
  const msg = await ctx.queue.next<{ n: number }>("wait", { names: ["m"] });
  return msg.body.n;
}
