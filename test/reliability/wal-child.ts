// A child process for the WAL corruption test. argv: <db> <ledger> <durability> <blockAt>
// Forty steps, each appending "s<i>" to the ledger before it returns; step `blockAt` never returns (the
// test kills the process there). Prints the run's output when it completes.
import fs from "node:fs";
import { setup, workflow } from "../../src/index.js";

const [db, ledger, durability, blockAt] = process.argv.slice(2) as [string, string, string, string];

const forty = workflow({
  state: { done: 0, pad: "" },
  run: async (ctx) => {
    for (let i = 0; i < 40; i++) {
      await ctx.step(`s${i}`, async (s) => {
        fs.appendFileSync(ledger, `s${i}\n`);
        if (i === Number(blockAt)) await new Promise(() => {});
        s.state.done++;
        s.state.pad = "x".repeat(3000); // a page or so per commit, so the WAL holds many frames
        return i;
      });
    }
    return ctx.state.done;
  },
});

const engine = await setup({ use: { forty } }).start({
  database: db,
  durability: durability as "normal" | "full",
});
const run = await engine.getOrCreate("forty", "w-1");
process.stdout.write(`${JSON.stringify(await run.result())}\n`);
await engine.close();
