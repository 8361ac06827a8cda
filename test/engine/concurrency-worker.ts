// A worker process for the concurrency tests: registers a workflow limited to 2 runs per customer, creates
// (idempotently) the 20 runs of customer c-9, and executes runs until all 20 completed, then prints "done".
// argv: <database> <ledger file> <mode: "work" | "hang">. Each step appends "start <key> <pid> <time>" to the
// ledger when it begins and "end <key> <pid> <time>" when it ends (O_APPEND: one total order of events),
// after "ready - <pid>" once its engine is up (it waits for $WORKERS ready lines before creating runs);
// in "hang" mode a step never ends (the test SIGKILLs the process while it holds its slots).
import fs from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { internals } from "../../src/engine/engine.js";
import { setup, workflow } from "../../src/index.js";

const [database, ledger, mode] = process.argv.slice(2) as [string, string, "work" | "hang"];
const stamp = () => (performance.timeOrigin + performance.now()).toFixed(3);

const limited = workflow({
  concurrency: { limit: 2, key: (input: { customerId: string }) => input.customerId, label: "customer" },
  run: async (ctx) => {
    await ctx.step("work", async () => {
      fs.appendFileSync(ledger, `start ${ctx.key} ${process.pid} ${stamp()}\n`);
      if (mode === "hang") await new Promise(() => {});
      await sleep(100);
      fs.appendFileSync(ledger, `end ${ctx.key} ${process.pid} ${stamp()}\n`);
    });
    return ctx.key;
  },
});

// $MAX_ACTIVE caps the runs this process executes at once (the first test runs three processes holding one each).
const maxActiveRuns = process.env.MAX_ACTIVE ? Number(process.env.MAX_ACTIVE) : undefined;
const engine = await setup({ use: { limited } }).start({ database, leaseMs: 10_000, maxActiveRuns });
// Both workers start creating runs only once both engines are up, so both take part.
fs.appendFileSync(ledger, `ready - ${process.pid} ${stamp()}\n`);
const peers = Number(process.env.WORKERS ?? "1");
while (
  fs
    .readFileSync(ledger, "utf8")
    .split("\n")
    .filter((l) => l.startsWith("ready ")).length < peers
) {
  await sleep(20);
}
const runs = [];
for (let i = 0; i < 20; i++) {
  runs.push(await engine.getOrCreate("limited", `r-${String(i).padStart(2, "0")}`, { customerId: "c-9" }));
}
// One scheduler pass after the runs exist, then "ticked": the test knows this worker has tried to claim.
await internals(engine).tick();
fs.appendFileSync(ledger, `ticked - ${process.pid} ${stamp()}\n`);
await Promise.all(runs.map((r) => r.result({ timeout: 120_000 })));
process.stdout.write("done\n");
await engine.close();
