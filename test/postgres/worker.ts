// A worker process for the PostgreSQL multi-process tests: runs workflows on one database until killed.
// Every side effect of a step appends "<pid> <what>" to the ledger file, so the test counts executions.
//
// Usage: node --import tsx test/postgres/worker.ts <url> <options as JSON>
//   ledger     file to append side effects to
//   machine    pretend to be this host in the lease owner id (so takeover waits for the lease to expire)
//   leaseMs    lease length (default 15 s)
//   workflows  names of the workflows this worker runs (default all)
//   create     runs to create at start: [[workflow, key, input], ...]
//   gate       step "last" of `job` waits until this file exists
//   every      declare the schedule "beat" (workflow `beat`) firing at this interval
// Prints "ready" once started and its runs created; SIGTERM closes the engine cleanly.

import fs from "node:fs";
import { z } from "zod";
import { setup, workflow } from "../../src/index.js";

interface Options {
  ledger: string;
  machine?: string;
  leaseMs?: number;
  workflows?: string[];
  create?: Array<[string, string, unknown]>;
  gate?: string;
  every?: string;
}

const [url, json] = process.argv.slice(2) as [string, string];
const opts = JSON.parse(json) as Options;
const note = (line: string) => fs.appendFileSync(opts.ledger, `${process.pid} ${line}\n`);

/** Steps, a timer, a queue wait, and a slow last step: the shape of the work the test shares out. */
export const job = workflow({
  state: { steps: 0 },
  queues: { go: z.object({ token: z.string() }) },
  run: async (ctx, input: { n: number }) => {
    await ctx.step("first", (s) => {
      note(`first ${input.n}`);
      s.state.steps++;
    });
    await ctx.sleep("nap", 100 + (input.n % 5) * 50);
    await ctx.step("after-nap", (s) => {
      note(`after-nap ${input.n}`);
      s.state.steps++;
    });
    const go = await ctx.queue.next("wait-go", { queue: "go" });
    await ctx.step("after-go", (s) => {
      note(`after-go ${input.n} ${go.token}`);
      s.state.steps++;
    });
    await ctx.step("last", async (s) => {
      note(`last ${input.n}`);
      while (opts.gate && !fs.existsSync(opts.gate)) await new Promise((r) => setTimeout(r, 100));
      s.state.steps++;
    });
    return { n: input.n, token: go.token };
  },
});

/** Waits for a person's decision. */
export const approval = workflow({
  state: { by: null as string | null },
  queues: { decisions: z.object({ approve: z.boolean(), by: z.string() }) },
  run: async (ctx) => {
    await ctx.step("prepare", (s) => {
      note(`prepare ${s.key}`);
    });
    const d = await ctx.queue.next("await-decision", { queue: "decisions" });
    await ctx.step("record", (s) => {
      note(`record ${s.key} ${d.by}`);
      s.state.by = d.by;
    });
    return { approved: d.approve, by: d.by };
  },
});

/** Started by the schedule "beat": notes which firing ran it. */
export const beat = workflow({
  run: async (ctx) => {
    await ctx.step("beat", (s) => {
      note(`beat ${s.key}`);
    });
  },
});

const all = { job, approval, beat } as Record<string, typeof job | typeof approval | typeof beat>;
const use = Object.fromEntries(
  Object.entries(all).filter(([name]) => opts.workflows?.includes(name) ?? true),
);
const schedules: Record<string, { workflow: string; every: string }> = opts.every
  ? { beat: { workflow: "beat", every: opts.every } }
  : {};
const engine = await setup({ use, schedules }).start({
  database: url,
  ...(opts.leaseMs ? { leaseMs: opts.leaseMs } : {}),
  ...(opts.machine ? { ownerId: `${opts.machine}:${process.pid}:w` } : {}),
});
await Promise.all(
  (opts.create ?? []).map(([wf, key, input]) =>
    (engine.getOrCreate as (...a: unknown[]) => Promise<unknown>)(wf, key, input),
  ),
);
process.stdout.write("ready\n");
const stop = () => {
  void engine.close().then(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
