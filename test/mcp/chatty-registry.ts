// A registry whose code writes to stdout, as application code does (console.log at load and in steps).
// Served over stdio, none of it may reach the protocol stream.

import { setup, workflow } from "../../src/index.js";

console.log("chatty registry loading");

export const chatty = workflow({
  run: async (ctx) => {
    await ctx.step("talk", () => {
      console.log(`processing ${ctx.key}`);
      process.stdout.write("a raw write to stdout\n");
      return "said";
    });
    return "done";
  },
});

export const registry = setup({ use: { chatty } });
