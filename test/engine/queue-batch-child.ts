// A child process for the batch crash test: one run collects a batch of 5 messages on "items", then a step
// records what it got in the ledger. argv: <database> <ledger>. Prints the batch as JSON when the run ends.
import fs from "node:fs";
import { z } from "zod";
import { setup, workflow } from "../../src/index.js";

const [database, ledger] = process.argv.slice(2) as [string, string];

const collect = workflow({
  queues: { items: z.object({ n: z.number() }) },
  run: async (ctx) => {
    const batch = await ctx.queue.nextBatch("collect", { queue: "items", count: 5 });
    const ns = batch.map((m) => m.n);
    await ctx.step("use", () => {
      fs.appendFileSync(ledger, `${JSON.stringify(ns)}\n`);
    });
    return ns;
  },
});

const engine = await setup({ use: { collect } }).start({ database, leaseMs: 2_000 });
const run = await engine.getOrCreate("collect", "c-1");
process.stdout.write(`${JSON.stringify(await run.result())}\n`);
await engine.close();
