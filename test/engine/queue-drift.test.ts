// Code drift in queue waits: a wait recorded for one message and now asked for a batch (or the reverse),
// another batch size, another queue, or a list where one queue stood fails the run with HistoryDivergedError
// naming what history waited for and what the code asks for; the same wait with its queues reordered replays.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import { FakeClock, setup, type WorkflowContext, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const DATABASES = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

const queues = { approve: z.object({ by: z.string() }), reject: z.object({ by: z.string() }) };
type Ctx = WorkflowContext<any, typeof queues>;

/** Runs `before` (its wait gets one "approve" message) until it sleeps, then resumes it with `after`'s code. */
async function driftRun(
  database: string,
  before: (ctx: Ctx) => Promise<unknown>,
  after: (ctx: Ctx) => Promise<unknown>,
) {
  const clock = new FakeClock();
  const first = await setup({ use: { wf: workflow({ queues, run: before }) } }).start({ database, clock });
  const run = await first.getOrCreate("wf", "k");
  await run.send("approve", { by: "ann" });
  await waitForStatus(first, run, ["sleeping"]);
  await first.close();
  const second = closeLater(
    await setup({ use: { wf: workflow({ queues, run: after }) } }).start({ database, clock }),
  );
  clock.advance(60_000);
  const handle = await second.get("wf", "k");
  const result = await handle.result({ timeout: 10_000 }).then(
    (value) => ({ value }),
    () => null,
  );
  return { result, info: await handle.info() };
}

describe.each(DATABASES)("queue wait drift ($name)", ({ database }) => {
  it("one message recorded, a batch asked for: diverged, naming both", async () => {
    const { info } = await driftRun(
      await database(),
      async (ctx) => {
        await ctx.queue.next("decide", { queue: "approve" });
        await ctx.sleep("nap", "1m");
      },
      async (ctx) => {
        await ctx.queue.nextBatch("decide", { queue: "approve", count: 2 });
        await ctx.sleep("nap", "1m");
      },
    );
    expect(info.status).toBe("failed");
    expect(info.error!.name).toBe("HistoryDivergedError");
    expect(info.error!.message).toContain(
      'history holds a queue wait named "decide" waiting for the next message on "approve"; the code asked for a batch of up to 2 messages on "approve"',
    );
    expect(info.error!.message).toContain('keep "decide" waiting for the next message on "approve"');
  });

  it("a batch recorded, one message asked for; and another batch size", async () => {
    const batch = async (ctx: Ctx) => {
      await ctx.queue.nextBatch("decide", { queue: "approve", count: 1 });
      await ctx.sleep("nap", "1m");
    };
    const one = await driftRun(await database(), batch, async (ctx) => {
      await ctx.queue.next("decide", { queue: "approve" });
      await ctx.sleep("nap", "1m");
    });
    expect(one.info.error!.message).toContain(
      'waiting for a batch of up to 1 messages on "approve"; the code asked for the next message on "approve"',
    );
    const three = await driftRun(await database(), batch, async (ctx) => {
      await ctx.queue.nextBatch("decide", { queue: "approve", count: 3 });
      await ctx.sleep("nap", "1m");
    });
    expect(three.info.error!.message).toContain("the code asked for a batch of up to 3 messages");
  });

  it("another queue, or a list where one queue stood: diverged; the same list reordered replays", async () => {
    const single = async (ctx: Ctx) => {
      await ctx.queue.next("decide", { queue: "approve" });
      await ctx.sleep("nap", "1m");
    };
    const other = await driftRun(await database(), single, async (ctx) => {
      await ctx.queue.next("decide", { queue: "reject" });
      await ctx.sleep("nap", "1m");
    });
    expect(other.info.error!.message).toContain('the code asked for the next message on "reject"');
    const list = await driftRun(await database(), single, async (ctx) => {
      await ctx.queue.next("decide", { queue: ["approve", "reject"] });
      await ctx.sleep("nap", "1m");
    });
    expect(list.info.error!.message).toContain(
      'the code asked for the next message on any of ["approve","reject"]',
    );
    const reordered = await driftRun(
      await database(),
      async (ctx) => {
        await ctx.queue.next("decide", { queue: ["approve", "reject"] });
        await ctx.sleep("nap", "1m");
      },
      async (ctx) => {
        const got = await ctx.queue.next("decide", { queue: ["reject", "approve"] });
        await ctx.sleep("nap", "1m");
        return got;
      },
    );
    expect(reordered.info.status).toBe("completed");
    expect(reordered.result).toEqual({ value: { queue: "approve", body: { by: "ann" } } });
  });
});
