// A child process for the rollback crash test: three reservations with undo, a payment that fails for good.
// argv: <database> <ledger> <mode: "block" | "finish">. In "block" mode the hotel's undo never returns (we get killed).
import fs from "node:fs";
import { FatalError, setup, workflow } from "../../src/index.js";

const [database, ledger, mode] = process.argv.slice(2) as [string, string, string];
const note = (line: string) => fs.appendFileSync(ledger, `${line}\n`);

const trip = workflow({
  run: async (ctx) => {
    await ctx.rollbackCheckpoint("trip");
    for (const what of ["flight", "hotel", "car"]) {
      await ctx.step(
        `reserve-${what}`,
        () => {
          note(what);
          return { id: what };
        },
        {
          rollback: async (_rb, out) => {
            note(`undo-${out.id}`);
            if (out.id === "hotel" && mode === "block") await new Promise(() => {});
          },
        },
      );
    }
    await ctx.step(
      "capture-payment",
      () => {
        note("pay");
        throw new FatalError("card declined");
      },
      { retries: 0 },
    );
  },
});

const engine = await setup({ use: { trip } }).start({ database });
const run = await engine.getOrCreate("trip", "crash-me");
try {
  await run.result();
} catch {
  process.stdout.write(`${JSON.stringify((await run.info()).error?.code)}\n`);
}
await engine.close();
