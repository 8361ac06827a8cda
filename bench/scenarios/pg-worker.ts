// One engine process of the PostgreSQL multi-process row: `pg-worker.ts <url> <worker> <runs> <steps> <await>`.
// Starts its engine, prints "ready", waits for "go" on stdin, runs its share of runs and prints
// {"start","end"} in epoch milliseconds, then exits when stdin closes. <await>: "result" awaits each run's
// handle.result() (what an application writes); "events" counts "completed" run events instead.

import readline from "node:readline";
import { deferred } from "../lib/common.js";
import { registry } from "../lib/workflows.js";

const [url, worker, runs, steps, awaitBy] = process.argv.slice(2);
const count = Number(runs);
const engine = await registry.start({ database: url! });
const lines = readline.createInterface({ input: process.stdin });
const go = new Promise<void>((resolve) => lines.once("line", () => resolve()));
process.stdout.write("ready\n");
await go;
const now = () => performance.timeOrigin + performance.now();
const start = now();
const completed = deferred();
let left = count;
if (awaitBy === "events") {
  engine.on((e) => {
    if (e.type === "run" && e.status === "completed" && --left === 0) completed.resolve();
  });
}
const handles = await Promise.all(
  Array.from({ length: count }, (_, i) =>
    engine.getOrCreate("seq", `w${worker}-r${i}`, { n: Number(steps) }),
  ),
);
if (awaitBy === "events") await completed.promise;
else await Promise.all(handles.map((h) => h.result()));
const end = now();
process.stdout.write(`${JSON.stringify({ start, end })}\n`);
await new Promise<void>((resolve) => lines.once("close", () => resolve()));
await engine.close();
process.exit(0);
