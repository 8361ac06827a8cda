// The other process of bench/mcp-caps.ts, built from the tree under test (its own schema and engine).
// argv: <tree> <db> <waiting runs>. Creates that many runs waiting on a queue, prints "ready", then
// commits a step about every 10 ms until killed (the writes the MCP server notices from outside).

import path from "node:path";
import { pathToFileURL } from "node:url";
import { z } from "zod";

const [tree, db, waitingArg] = process.argv.slice(2) as [string, string, string];
const { setup, workflow } = (await import(
  pathToFileURL(path.join(tree, "src/index.ts")).href
)) as typeof import("../src/index.js");

const idle = workflow({
  state: {},
  run: async (ctx) => {
    await ctx.queue.next("wait", { queue: "never" });
  },
  queues: { never: z.unknown() },
});
const ticker = workflow({
  state: { n: 0 },
  run: async (ctx) => {
    for (let i = 0; ; i++) {
      await ctx.step(`tick-${i}`, async (s) => {
        await new Promise((r) => setTimeout(r, 10));
        s.state.n++;
      });
    }
  },
});

const engine = await setup({ use: { idle, ticker } }).start({ database: db });
for (let i = 0; i < Number(waitingArg); i++) await engine.getOrCreate("idle", `w-${i}`);
for (;;) {
  const counts = (await engine.listWorkflows()).find((w) => w.name === "idle")?.runs ?? {};
  if ((counts.waiting ?? 0) >= Number(waitingArg)) break;
  await new Promise((r) => setTimeout(r, 50));
}
process.stdout.write("ready\n");
await engine.getOrCreate("ticker", "t-1");
