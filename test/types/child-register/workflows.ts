// ctx.child by name, typed through the application's Register (checked by tsc in test/engine/child-types.test.ts).
import { type ChildAddress, setup, workflow } from "../../../src/index.js";

export const payment = workflow({
  run: async (_ctx, input: { amount: number }) => ({ receipt: `r-${input.amount}` }),
});

export const order = workflow({
  run: async (ctx, input: { amount: number }) => {
    const receipt = await ctx.child("charge", "payment", {
      key: `pay-${ctx.key}`,
      input: { amount: input.amount },
    });
    const text: string = receipt.receipt;
    const address: ChildAddress = await ctx.child("later", "payment", {
      key: `later-${ctx.key}`,
      input: { amount: 1 },
      detach: true,
    });
    // @ts-expect-error the payment workflow takes { amount: number }
    await ctx.child("bad-input", "payment", { key: "x", input: { amount: "12" } });
    // @ts-expect-error no workflow of that name is registered
    await ctx.child("unknown", "refund", { key: "y", input: {} });
    // @ts-expect-error the output has no such field
    receipt.total;
    return { text, address };
  },
});

export const registry = setup({ use: { order, payment } });

declare module "../../../src/index.js" {
  interface Register {
    workflows: typeof registry.workflows;
  }
}
