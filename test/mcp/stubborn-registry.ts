// A counter whose steps ignore step.signal: one of them holds until a file exists, so a test can cancel
// the run over MCP while that step runs and let it return afterwards.

import fs from "node:fs";
import { setup, workflow } from "../../src/index.js";

export const counter = workflow({
  state: { count: 0 },
  run: async (ctx, input: { steps: number; holdAt: number; release: string }) => {
    for (let i = 0; i < input.steps; i++) {
      await ctx.step(`inc-${i}`, async (s) => {
        if (i === input.holdAt) {
          process.stderr.write(`inc-${i} started\n`);
          while (!fs.existsSync(input.release)) await new Promise((r) => setTimeout(r, 10));
        }
        s.state.count++;
        process.stderr.write(`inc-${i} returned\n`);
      });
    }
    return ctx.state.count;
  },
});

export const registry = setup({ use: { counter } });
