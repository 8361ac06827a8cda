// ctx.queue.next on several queues: the first message on any of them (earliest sent first) with the queue
// it came from, typed as a union of the queues' bodies; the run waits on each queue without memory, a
// message on any wakes it, a timeout resolves null, and a replay puts the messages back in order.
// On SQLite and PostgreSQL.

import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { waitForRun, waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { MAX_BATCH_COUNT, MAX_WAIT_QUEUES } from "../../src/engine/queue-waits.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

/** Waits until the run waits at `entry`. */
function waitingAt(
  engine: Parameters<typeof waitForRun>[0],
  run: Parameters<typeof waitForRun>[1],
  entry: string,
) {
  return waitForRun(engine, run, (i) => i.status === "waiting" && i.waiting?.[0]?.entry === entry, {
    what: `waiting at "${entry}"`,
  });
}

const DATABASES = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

const queues = {
  hold: z.object({}),
  approve: z.object({ by: z.string() }),
  reject: z.object({ why: z.string() }),
};

const decide = workflow({
  queues,
  run: async (ctx, input: { hold?: boolean; count?: number } | undefined) => {
    if (input?.hold) await ctx.queue.next("hold", { queue: "hold" });
    const seen: string[] = [];
    for (let i = 0; i < (input?.count ?? 1); i++) {
      const m = await ctx.queue.next(`decide-${i}`, { queue: ["approve", "reject"], timeout: "1h" });
      if (m === null) {
        seen.push("timed out");
      } else if (m.queue === "approve") {
        expectTypeOf(m.body).toEqualTypeOf<{ by: string }>();
        // @ts-expect-error an approval has no `why`
        void m.body.why;
        seen.push(`approve:${m.body.by}`);
      } else {
        expectTypeOf(m.queue).toEqualTypeOf<"reject">();
        expectTypeOf(m.body).toEqualTypeOf<{ why: string }>();
        seen.push(`reject:${m.body.why}`);
      }
    }
    // Single-queue calls keep resolving the body itself.
    const plain = await ctx.queue.next("after", { queue: "approve", timeout: "1h" });
    expectTypeOf(plain).toEqualTypeOf<{ by: string } | null>();
    return seen;
  },
});

describe.each(DATABASES)("next on several queues ($name)", ({ database }) => {
  it("takes messages sent earlier on any of the queues in the order they were sent", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { decide } }).start({ database: await database(), clock }));
    const run = await engine.getOrCreate("decide", "early", { hold: true, count: 3 });
    await waitForStatus(engine, run, ["waiting"]);
    await run.send("reject", { why: "too dear" });
    await run.send("approve", { by: "ann" });
    await run.send("reject", { why: "late" });
    await run.send("hold", {});
    await waitingAt(engine, run, "after");
    const history = await run.history();
    const taken = history.filter((e) => e.name.startsWith("decide-"));
    expect(taken.map((e) => [e.name, e.detail?.received, e.output])).toEqual([
      ["decide-0", "reject", { why: "too dear" }],
      ["decide-1", "approve", { by: "ann" }],
      ["decide-2", "reject", { why: "late" }],
    ]);
    expect(taken[0]!.detail).toMatchObject({ queue: "approve", queues: ["approve", "reject"] });
    const msgs = await internals(engine).store.listMessages(run.id, { includeConsumed: true, limit: 10 });
    expect(msgs.every((m) => m.consumedAt !== null)).toBe(true);
    await run.send("approve", { by: "end" });
    expect(await run.result({ timeout: 5000 })).toEqual(["reject:too dear", "approve:ann", "reject:late"]);
  });

  it("waits on each queue without memory, wakes on a message to any of them, and times out to null", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { decide } }).start({ database: await database(), clock }));
    const run = await engine.getOrCreate("decide", "late", { count: 2 });
    await waitForStatus(engine, run, ["waiting"]);
    expect(internals(engine).active.size).toBe(0);
    const until = clock.now() + 3_600_000;
    expect((await run.info()).waiting).toEqual([
      { kind: "queue", entry: "decide-0", queue: "approve", until },
      { kind: "queue", entry: "decide-0", queue: "reject", until },
    ]);
    await run.send("reject", { why: "no budget" });
    await waitingAt(engine, run, "decide-1");
    expect((await run.info()).waiting?.map((w) => [w.entry, w.queue])).toEqual([
      ["decide-1", "approve"],
      ["decide-1", "reject"],
    ]);
    clock.advance(3_600_000);
    await engine.tick();
    await waitingAt(engine, run, "after");
    expect((await run.info()).waiting?.map((w) => [w.entry, w.queue])).toEqual([["after", "approve"]]);
    clock.advance(3_600_000);
    await engine.tick();
    expect(await run.result({ timeout: 5000 })).toEqual(["reject:no budget", "timed out"]);
  });

  it("a replay from the first wait puts back every message it and later waits took, in order", async () => {
    const engine = closeLater(await setup({ use: { decide } }).start({ database: await database() }));
    const run = await engine.getOrCreate("decide", "replayed", { hold: true, count: 2 });
    await run.send("approve", { by: "ann" });
    await run.send("reject", { why: "late" });
    await run.send("approve", { by: "end" });
    await run.send("hold", {});
    expect(await run.result({ timeout: 5000 })).toEqual(["approve:ann", "reject:late"]);
    const dry = await engine.replay(run.id, { fromStep: "decide-0", dryRun: true });
    expect(dry).toMatchObject({
      restoreMessages: [
        { queue: "approve", body: { by: "ann" } },
        { queue: "reject", body: { why: "late" } },
        { queue: "approve", body: { by: "end" } },
      ],
    });
    await engine.replay(run.id, { fromStep: "decide-0" });
    await waitForStatus(engine, run, ["completed"]);
    expect(await run.result({ timeout: 5000 })).toEqual(["approve:ann", "reject:late"]);
    const taken = (await run.history()).filter((e) => e.name.startsWith("decide-"));
    expect(taken.map((e) => e.detail?.received)).toEqual(["approve", "reject"]);
  });

  it("refuses an empty list and a queue the workflow lacks, naming the queues it has", async () => {
    const bad = workflow({
      queues,
      run: async (ctx, input: { queues: string[] }) =>
        ctx.queue.next("bad", { queue: input.queues as Array<"approve"> }),
    });
    const engine = closeLater(await setup({ use: { bad } }).start({ database: await database() }));
    const empty = await engine.getOrCreate("bad", "empty", { queues: [] });
    await expect(empty.result({ timeout: 5000 })).rejects.toThrow(
      /empty list of queues.*hold, approve, reject/,
    );
    const unknown = await engine.getOrCreate("bad", "unknown", { queues: ["approve", "nope"] });
    await expect(unknown.result({ timeout: 5000 })).rejects.toThrow(/nope/);
  });
});

// The limits do not depend on the store: SQLite only.
describe("the bounds of a wait (issue 20 check)", () => {
  const many = Object.fromEntries(
    Array.from({ length: 150 }, (_, i) => [`m${i}`, z.object({ n: z.number() })]),
  ) as Record<string, z.ZodType<{ n: number }>>;
  const names = Object.keys(many);

  it(`waits on ${MAX_WAIT_QUEUES} queues (duplicates counted once) and refuses more, naming the limit and the fix`, async () => {
    const wide = workflow({
      queues: many,
      run: async (ctx, input: { queues: string[] }) => ctx.queue.next("any", { queue: input.queues }),
    });
    const engine = closeLater(await setup({ use: { wide } }).start({ database: tempDb() }));
    const fits = await engine.getOrCreate("wide", "fits", {
      queues: [...names.slice(0, MAX_WAIT_QUEUES), "m0", "m1"],
    });
    await waitingAt(engine, fits, "any");
    await fits.send(`m${MAX_WAIT_QUEUES - 1}`, { n: 1 });
    expect(await fits.result({ timeout: 5000 })).toEqual({
      queue: `m${MAX_WAIT_QUEUES - 1}`,
      body: { n: 1 },
    });
    const over = await engine.getOrCreate("wide", "over", { queues: names.slice(0, MAX_WAIT_QUEUES + 1) });
    await expect(over.result({ timeout: 5000 })).rejects.toThrow(
      new RegExp(
        `names ${MAX_WAIT_QUEUES + 1} queues, more than the ${MAX_WAIT_QUEUES} one wait may wait on\\. Wait on fewer queues`,
      ),
    );
  });

  it(`refuses a batch of more than ${MAX_BATCH_COUNT} messages naming the limit, and a count of the wrong type naming its type`, async () => {
    const batch = workflow({
      queues: { q: z.object({}) },
      run: async (ctx, input: { count: unknown }) =>
        ctx.queue.nextBatch("b", { queue: "q", count: input.count as number, timeout: 0 }),
    });
    const engine = closeLater(await setup({ use: { batch } }).start({ database: tempDb() }));
    const ok = await engine.getOrCreate("batch", "max", { count: MAX_BATCH_COUNT });
    expect(await ok.result({ timeout: 5000 })).toEqual([]);
    for (const [key, count] of [
      ["huge", 1e9],
      ["unsafe", 2 ** 53 + 2],
      ["one-over", MAX_BATCH_COUNT + 1],
    ] as const) {
      const run = await engine.getOrCreate("batch", key, { count });
      await expect(run.result({ timeout: 5000 })).rejects.toThrow(
        `more than the ${MAX_BATCH_COUNT} one batch may hold. Ask for at most ${MAX_BATCH_COUNT}`,
      );
    }
    const text = await engine.getOrCreate("batch", "string", { count: "10" });
    await expect(text.result({ timeout: 5000 })).rejects.toThrow(
      `needs count to be a whole number from 1 to ${MAX_BATCH_COUNT}, got the string "10". Read its history`,
    );
  });

  it("a negative timeout says it must not be negative", async () => {
    const neg = workflow({
      queues: { q: z.object({}) },
      run: async (ctx) => ctx.queue.next("w", { queue: "q", timeout: -5 }),
    });
    const engine = closeLater(await setup({ use: { neg } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("neg", "n");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(/-5: a duration must not be negative/);
  });
});
