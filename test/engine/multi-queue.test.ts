// ctx.queue.next on several queues: the first message on any of them (earliest sent first) with the queue
// it came from, typed as a union of the queues' bodies; the run waits on each queue without memory, a
// message on any wakes it, a timeout resolves null, and a replay puts the messages back in order.
// On SQLite and PostgreSQL.

import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { waitForRun, waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
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
