// A registry module for `waymark check` tests: the payout workflow with its queue wait renamed, same version.

import { z } from "zod";
import { setup, workflow } from "../../src/index.js";

export const registry = setup({
  use: {
    payout: workflow({
      queues: { approvals: z.object({ by: z.string() }) },
      run: async (ctx) => {
        await ctx.step("load-account", () => ({ iban: "DE00" }));
        const decision = await ctx.queue.next("wait-approval", { queue: "approvals" });
        return ctx.step("pay", () => ({ paidBy: decision.by }));
      },
    }),
  },
});
