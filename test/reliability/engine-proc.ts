// An engine process for the side-by-side tests. argv: <db> <ledger> <ownerId or "-"> <first:count of runs to create> <leaseMs>
// Steps append "pid run step start|end time" lines to the ledger so a test can check who ran what, when.
import fs from "node:fs";
import { z } from "zod";
import { Loop, setup, workflow } from "../../src/index.js";

const [db, ledger, ownerArg, createArg, leaseArg] = process.argv.slice(2) as string[];
const note = (run: string, step: string, edge: "start" | "end") =>
  fs.appendFileSync(ledger!, `${process.pid}\t${run}\t${step}\t${edge}\t${Date.now()}\n`);

/**
 * Six steps with short sleeps between them, so runs suspend and either process may pick them up. Steps
 * take 4 to 24 ms by run and step, so the two processes fall out of step and runs change hands (with
 * equal steps they settle into taking turns, each keeping the same runs).
 */
const hop = workflow({
  state: { done: 0 },
  run: async (ctx) => {
    const n = Number(ctx.key.split("-")[1] ?? 0);
    for (let i = 0; i < 6; i++) {
      await ctx.step(`hop-${i}`, async (s) => {
        note(ctx.key, `hop-${i}`, "start");
        await new Promise((r) => setTimeout(r, 4 + ((n * 7 + i * 3) % 11) * 2));
        s.state.done++;
        note(ctx.key, `hop-${i}`, "end");
      });
      await ctx.sleep(`rest-${i}`, 30);
    }
    return ctx.state.done;
  },
});

/** Consumes 200 messages, adding them up. */
const counter = workflow({
  state: { sum: 0, count: 0 },
  queues: { add: z.object({ n: z.number().int() }) },
  run: async (ctx) =>
    ctx.loop("count", {
      state: { i: 0 },
      historyKeep: 3,
      run: async (c, l) => {
        const m = await c.queue.next("next", { queue: "add" });
        await c.step("add", (s) => {
          s.state.sum += m.n;
          s.state.count++;
        });
        return l.i + 1 >= 200 ? Loop.break(ctx.state.sum) : Loop.continue({ i: l.i + 1 });
      },
    }),
});

const engine = await setup({ use: { hop, counter } }).start({
  database: db,
  leaseMs: Number(leaseArg),
  ...(process.env.MAX_ACTIVE ? { maxActiveRuns: Number(process.env.MAX_ACTIVE) } : {}),
  ...(ownerArg !== "-" ? { ownerId: ownerArg } : {}),
});
process.stdout.write("ready\n");
// With GO_FILE set, wait for the test to start every process before any run exists.
while (process.env.GO_FILE && !fs.existsSync(process.env.GO_FILE))
  await new Promise((r) => setTimeout(r, 10));
const [first, count] = createArg!.split(":").map(Number) as [number, number];
for (let i = first; i < first + count; i++) await engine.getOrCreate("hop", `hop-${i}`);
if (process.env.COUNTERS)
  for (let i = 0; i < Number(process.env.COUNTERS); i++) await engine.getOrCreate("counter", `c-${i}`);
process.stdout.write("created\n");
for (;;) {
  const open = await engine.listRuns({
    status: ["pending", "running", "sleeping", "waiting", "retrying"],
    limit: 1,
  });
  if (open.runs.length === 0) break;
  await new Promise((r) => setTimeout(r, 25));
}
await engine.close();
process.stdout.write("done\n");
