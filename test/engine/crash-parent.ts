// A child process for the child-run crash test: an order charges through a child payment run. In "kill"
// mode the process SIGKILLs itself on the commit that would record the parent's child entry, that is after
// the child run was created and before the parent recorded it. argv: <db> <mode: "kill" | "finish">.
import { setup, workflow } from "../../src/index.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";

const [db, mode] = process.argv.slice(2) as [string, string];

const payment = workflow({
  run: async (ctx, input: { amount: number }) => {
    await ctx.step("charge", () => input.amount);
    return { receipt: `r-${input.amount}` };
  },
});

const order = workflow({
  run: async (ctx, input: { amount: number }) => {
    const receipt = await ctx.child("pay", payment, {
      key: `pay-${ctx.key}`,
      input: { amount: input.amount },
    });
    return { paid: receipt.receipt };
  },
});

const store = openSqliteStore(db);
const commit = store.commit.bind(store);
store.commit = async (batch) => {
  if (mode === "kill" && batch.entries.some((e) => e.kind === "child")) process.kill(process.pid, "SIGKILL");
  return commit(batch);
};
const engine = await setup({ use: { order, payment } }).start({ database: store });
const run = await engine.getOrCreate("order", "o-1", { amount: 12 });
const output = await run.result();
process.stdout.write(`${JSON.stringify(output)}\n`);
await engine.close();
