// A registry whose run sleeps an hour, then has a side effect: writes a marker file named in its input.

import fs from "node:fs";
import { setup, workflow } from "../../src/index.js";

export const napper = workflow({
  description: "Sleeps for an hour, then writes a marker file.",
  run: async (ctx, input: { marker: string }) => {
    await ctx.sleep("nap", "1h");
    await ctx.step("mark", () => fs.writeFileSync(input.marker, "the step ran\n"));
    return "rested";
  },
});

export const registry = setup({ use: { napper } });
