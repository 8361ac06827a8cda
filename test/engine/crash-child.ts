// A child process for the crash test: runs a ten-step workflow whose steps append to a ledger file.
// argv: <db> <ledger> <mode: "block" | "finish">. In "block" mode step s5 never returns (we get killed).
import fs from "node:fs";
import { setup, workflow } from "../../src/index.js";

const [db, ledger, mode] = process.argv.slice(2) as [string, string, string];

const tenSteps = workflow({
  state: { done: [] as number[] },
  run: async (ctx) => {
    for (let i = 0; i < 10; i++) {
      await ctx.step(`s${i}`, async (s) => {
        fs.appendFileSync(ledger, `s${i}\n`);
        if (i === 5 && mode === "block") await new Promise(() => {});
        s.state.done.push(i);
        return i;
      });
    }
    return "finished";
  },
});

const engine = await setup({ use: { tenSteps } }).start({ database: db });
const run = await engine.getOrCreate("tenSteps", "crash-me");
const output = await run.result();
process.stdout.write(`${JSON.stringify(output)}\n`);
await engine.close();
