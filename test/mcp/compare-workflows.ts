// Workflows for compare_runs and diagnose_run's sibling evidence: pairs of runs that differ in their input,
// in a step's output, in their code version, or in how long a step took.

import { type FakeClock, FatalError, workflow } from "../../src/index.js";

/** Sign-ups: the welcome email needs input.customer.email; a sign-up without one fails. */
export const signup = workflow({
  state: { sentTo: null as string | null },
  run: async (ctx, input: { customer: { name: string; email: string | null }; plan: string }) => {
    const plan = await ctx.step("load-plan", () => ({ plan: input.plan, seats: 5 }));
    return ctx.step(
      "send-welcome",
      (s) => {
        const to = input.customer.email;
        if (!to) throw new FatalError(`no address to welcome ${input.customer.name} at`);
        s.state.sentTo = to;
        return { sent: to, plan: plan.plan };
      },
      { retries: 0 },
    );
  },
});

/** The exchange-rate service quote() asks: its answer per currency, changed by tests between runs. */
export const rates = new Map<string, number | null>();

/** A quote in another currency: the rate step's output (not the input) decides whether conversion works. */
export const quote = workflow({
  state: { total: 0, rate: null as number | null },
  run: async (ctx, input: { amount: number; currency: string }) => {
    const rate = await ctx.step("fetch-rate", (s) => {
      s.state.rate = rates.get(input.currency) ?? null;
      return { currency: input.currency, rate: s.state.rate };
    });
    return ctx.step(
      "convert",
      (s) => {
        if (rate.rate === null) throw new FatalError(`no exchange rate for ${rate.currency}`);
        s.state.total = input.amount * rate.rate;
        return s.state.total;
      },
      { retries: 0 },
    );
  },
});

/** Report v1: one step. */
export const reportV1 = workflow({
  version: 1,
  run: async (ctx, input: { month: string }) => {
    const rows = await ctx.step("load-rows", () => [1, 2, 3]);
    return ctx.step("render", () => `${input.month}: ${rows.length} rows`);
  },
});

/** Report v2: a new step before rendering that fails on the same input. */
export const reportV2 = workflow({
  version: 2,
  run: async (ctx, input: { month: string }) => {
    const rows = await ctx.step("load-rows", () => [1, 2, 3]);
    await ctx.step(
      "check-totals",
      () => {
        throw new FatalError(`totals of ${input.month} do not add up`);
      },
      { retries: 0 },
    );
    return ctx.step("render", () => `${input.month}: ${rows.length} rows`);
  },
});

/** The test's fake clock, moved by a step to make it take `input.ms` on the engine's clock. */
export const timing: { clock: FakeClock | null } = { clock: null };

/** Export: the upload step takes as long as the input says (moving the fake clock), the rest no time. */
export const exporter = workflow({
  run: async (ctx, input: { ms: number }) => {
    await ctx.step("prepare", () => "ready");
    await ctx.step("upload", () => {
      timing.clock?.advance(input.ms);
      return "uploaded";
    });
    return "done";
  },
});

/** Many steps, for a 10,000-entry pair: each step's output is its index, shifted by the input's offset. */
export const bulk = workflow({
  run: async (ctx, input: { steps: number; offset: number; blob?: string }) => {
    for (let i = 0; i < input.steps; i++)
      await ctx.step(`item-${i}`, () => ({ n: i + input.offset, blob: input.blob ?? "" }));
    return input.steps;
  },
});
