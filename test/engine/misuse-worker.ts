// A process running a workflow whose step uses ctx without awaiting it, each way ctx can be misused, beside a
// well-behaved run: prints each run's outcome as a JSON line and exits. argv: <database file>
import { z } from "zod";
import { setup, workflow } from "../../src/index.js";

const MISUSES = {
  step: (ctx: any) => ctx.step("inner", () => 1),
  sleep: (ctx: any) => ctx.sleep("nap", 10),
  queue: (ctx: any) => ctx.queue.next("mail", { queue: "inbox" }),
  join: (ctx: any) => ctx.join("both", { a: async () => 1 }),
  version: (ctx: any) => ctx.version("v", 2),
  child: (ctx: any) => ctx.child("kid", "good", { key: "kid" }),
} as const;

const bad = workflow({
  run: async (ctx, input: { misuse: keyof typeof MISUSES }) => {
    await ctx.step("outer", () => {
      MISUSES[input.misuse](ctx); // its promise dropped: the step itself returns
      return "outer done";
    });
    return "finished";
  },
});
/** Past the step's first await the misuse is not caught (README): whatever the run does, the process goes on. */
const late = workflow({
  run: async (ctx, input: { misuse: keyof typeof MISUSES }) => {
    await ctx.step("outer", async () => {
      await new Promise((r) => setTimeout(r, 5));
      MISUSES[input.misuse](ctx);
      return "outer done";
    });
    return "finished";
  },
});
/** A ctx call dropped by the workflow's own code: the run ends with the call still waiting. */
const dropped = workflow({
  queues: { inbox: z.object({}) },
  run: async (ctx) => {
    void ctx.sleep("forgotten", 60_000);
    void ctx.queue.next("unread", { queue: "inbox" });
    return ctx.step("work", () => "dropped done");
  },
});
/** A step dropped by the workflow's code, whose record lands after the run failed (its promise then rejects). */
const stopped = workflow({
  run: async (ctx) => {
    void ctx.step("first", () => 1);
    throw new Error("failed before the step's record landed");
  },
});
const good = workflow({ run: async (ctx) => ctx.step("work", () => "good done") });

const [database] = process.argv.slice(2) as [string];
const engine = await setup({ use: { bad, late, dropped, stopped, good } }).start({
  database,
  deployCheck: false,
});
for (const misuse of Object.keys(MISUSES) as (keyof typeof MISUSES)[]) {
  const run = await engine.getOrCreate("bad", misuse, { misuse });
  const outcome = await run.result({ timeout: 10_000 }).then(
    (value) => ({ value }),
    (err: Error) => ({ error: err.message }),
  );
  // A turn for an unhandled rejection to surface before the next run.
  await new Promise((r) => setTimeout(r, 20));
  process.stdout.write(`${JSON.stringify({ misuse, ...outcome })}\n`);
}
for (const misuse of Object.keys(MISUSES) as (keyof typeof MISUSES)[]) {
  const run = await engine.getOrCreate("late", misuse, { misuse });
  await run.result({ timeout: 10_000 }).catch(() => {});
  await new Promise((r) => setTimeout(r, 20));
  process.stdout.write(`${JSON.stringify({ late: misuse, status: await run.status() })}\n`);
}
const forgot = await engine.getOrCreate("dropped", "d");
await forgot.result({ timeout: 10_000 }).catch(() => {});
await new Promise((r) => setTimeout(r, 20));
process.stdout.write(`${JSON.stringify({ dropped: await forgot.status() })}\n`);
const failed = await engine.getOrCreate("stopped", "s");
await failed.result({ timeout: 10_000 }).catch(() => {});
await new Promise((r) => setTimeout(r, 20));
process.stdout.write(`${JSON.stringify({ stopped: await failed.status() })}\n`);
const ok = await engine.getOrCreate("good", "g");
process.stdout.write(`${JSON.stringify({ good: await ok.result({ timeout: 10_000 }) })}\n`);
await engine.close();
