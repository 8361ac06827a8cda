// Small workflows for the MCP tests: an approval that waits on a queue, a failing one, a sleeper.

import { z } from "zod";
import { FatalError, setup, workflow } from "../../src/index.js";

export const approval = workflow({
  description: "Records an amount, waits for a decision, applies it.",
  state: { amount: 0, decision: null as null | { approve: boolean; by: string } },
  queues: { decisions: z.object({ approve: z.boolean(), by: z.string().min(1) }) },
  actions: {
    getState: (c) => c.state,
    double: (_c, n: number) => n * 2,
  },
  run: async (ctx, input: { amount: number }) => {
    await ctx.step("record-amount", async (s) => {
      s.state.amount = input.amount;
    });
    const decision = await ctx.queue.next("await-decision", { queue: "decisions" });
    await ctx.step("apply-decision", async (s) => {
      s.state.decision = decision;
    });
    return { approved: decision.approve, by: decision.by };
  },
});

export const flaky = workflow({
  description: "Loads data (as big as asked), then fails to charge.",
  state: { blob: "" },
  run: async (ctx, input: { size?: number } | undefined) => {
    const size = input?.size ?? 10;
    await ctx.step(
      "load",
      async (s) => {
        s.state.blob = "b".repeat(size);
        return { data: "x".repeat(size) };
      },
      { input: { size } },
    );
    await ctx.step("charge", async () => {
      throw new FatalError("card declined: insufficient funds");
    });
  },
});

const repaired = new Set<string>();
/** Deploys the "fix" for one run of `fixable` (in this process). */
export function repair(key: string): void {
  repaired.add(key);
}

export const fixable = workflow({
  description: "Fails at charge until repaired.",
  state: { charged: 0 },
  run: async (ctx) => {
    await ctx.step("prepare", async () => "ok");
    await ctx.step("charge", async (s) => {
      if (!repaired.has(ctx.key)) throw new FatalError("bug: tax rate missing");
      s.state.charged += 1;
    });
    return "charged";
  },
});

export const sleeper = workflow({
  description: "Sleeps for an hour.",
  run: async (ctx) => {
    await ctx.sleep("nap", "1h");
    return "rested";
  },
});

export const registry = setup({ use: { approval, flaky, fixable, sleeper } });
