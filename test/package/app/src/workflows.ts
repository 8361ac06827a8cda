// An app's own workflows, as a user writes them against the installed package: this module only
// defines and exports the registry, so `waymark mcp --registry` can load it.

import { FatalError, setup, workflow } from "waymark";
import { z } from "zod";

/** An order: reserve stock, wait for the payment, then pack and label in parallel. */
export const order = workflow({
  description: "Reserves stock, waits for the payment, packs and labels the parcel.",
  state: { reserved: 0, paidBy: null as string | null },
  queues: { payments: z.object({ by: z.string(), amount: z.number().positive() }) },
  run: async (ctx, input: { sku: string; quantity: number }) => {
    await ctx.step("reserve", (step) => {
      if (input.quantity <= 0) throw new FatalError(`Cannot reserve ${input.quantity} of ${input.sku}.`);
      step.state.reserved = input.quantity;
    });
    const payment = await ctx.queue.next("await-payment", { queue: "payments", timeout: "1h" });
    if (payment === null) return { shipped: false as const };
    await ctx.step("record-payment", (step) => {
      step.state.paidBy = payment.by;
    });
    const parcel = await ctx.join("ship", {
      box: (c) => c.step("pack", () => `box of ${input.quantity} ${input.sku}`),
      label: (c) => c.step("label", () => `to ${payment.by}`),
    });
    return { shipped: true as const, parcel: `${parcel.box}, ${parcel.label}` };
  },
  actions: { reserved: (c) => c.state.reserved },
});

export const registry = setup({ use: { order } });
