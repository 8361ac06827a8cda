// ctx.queue.nextBatch: up to `count` messages, as soon as `count` are there or whatever arrived when the
// timeout passes (possibly none), each consumed once in the commit that records it, and put back in order by
// a replay. On SQLite and PostgreSQL.

import { describe, expect, expectTypeOf, it } from "vitest";
import { z } from "zod";
import { waitForRun } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const DATABASES = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

const collect = workflow({
  queues: { items: z.object({ n: z.number() }) },
  run: async (ctx, input: { count: number; rounds?: number }) => {
    const got: number[][] = [];
    for (let i = 0; i < (input.rounds ?? 1); i++) {
      const batch = await ctx.queue.nextBatch(`collect-${i}`, {
        queue: "items",
        count: input.count,
        timeout: "5m",
      });
      expectTypeOf(batch).toEqualTypeOf<Array<{ n: number }>>();
      got.push(batch.map((m) => m.n));
    }
    return got;
  },
});

type Engine = Parameters<typeof waitForRun>[0];
type Ref = Parameters<typeof waitForRun>[1];

/** Waits until the run waits at `entry` with `taken` messages of its batch recorded. */
async function holding(
  engine: Engine,
  run: Ref & { history(): Promise<Array<{ name: string; detail?: any }>> },
  entry: string,
  taken: number,
) {
  await waitForRun(
    engine,
    run,
    async (i) =>
      i.status === "waiting" &&
      i.waiting?.[0]?.entry === entry &&
      (await run.history()).find((e) => e.name === entry)?.detail?.messageIds?.length === taken,
    { what: `waiting at "${entry}" with ${taken} taken` },
  );
}

describe.each(DATABASES)("nextBatch ($name)", ({ database }) => {
  it("returns as soon as count messages are there, earliest sent first, each consumed once", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { collect } }).start({ database: await database(), clock }));
    const run = await engine.getOrCreate("collect", "full", { count: 3, rounds: 2 });
    await run.send("items", { n: 1 });
    await holding(engine, run, "collect-0", 1);
    // A partial batch holds no unconsumed message, so the suspended run is not woken in a loop.
    expect(internals(engine).active.size).toBe(0);
    for (const n of [2, 3, 4]) await run.send("items", { n });
    await holding(engine, run, "collect-1", 1);
    for (const n of [5, 6]) await run.send("items", { n });
    expect(await run.result({ timeout: 5000 })).toEqual([
      [1, 2, 3],
      [4, 5, 6],
    ]);
    const msgs = await internals(engine).store.listMessages(run.id, { includeConsumed: true, limit: 10 });
    const entries = await run.history();
    const seqOf = (name: string) => entries.find((e) => e.name === name)!.id;
    expect(msgs.map((m) => m.consumedBy)).toEqual([
      ...[1, 2, 3].map(() => seqOf("collect-0")),
      ...[4, 5, 6].map(() => seqOf("collect-1")),
    ]);
    expect(entries.find((e) => e.name === "collect-0")!.detail).toMatchObject({
      count: 3,
      messageIds: msgs.slice(0, 3).map((m) => m.id),
    });
  });

  it("at the timeout returns what arrived, or none", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { collect } }).start({ database: await database(), clock }));
    const some = await engine.getOrCreate("collect", "some", { count: 10 });
    const none = await engine.getOrCreate("collect", "none", { count: 10 });
    await some.send("items", { n: 7 });
    await some.send("items", { n: 8 });
    await holding(engine, some, "collect-0", 2);
    await holding(engine, none, "collect-0", 0);
    clock.advance(299_999);
    await engine.tick();
    expect(await some.status()).toBe("waiting");
    clock.advance(1);
    await engine.tick();
    expect(await some.result({ timeout: 5000 })).toEqual([[7, 8]]);
    expect(await none.result({ timeout: 5000 })).toEqual([[]]);
    const rec = (await some.history()).find((e) => e.name === "collect-0")!;
    expect(rec.detail).toMatchObject({ timedOut: true, count: 10 });
  });

  it("a replay puts back every message the batch took, in order, and takes them again", async () => {
    const engine = closeLater(await setup({ use: { collect } }).start({ database: await database() }));
    const run = await engine.getOrCreate("collect", "replayed", { count: 3 });
    for (const n of [1, 2, 3]) await run.send("items", { n });
    expect(await run.result({ timeout: 5000 })).toEqual([[1, 2, 3]]);
    const dry = await engine.replay(run.id, { fromStep: "collect-0", dryRun: true });
    expect(dry).toMatchObject({
      restoreMessages: [1, 2, 3].map((n) => ({ queue: "items", body: { n } })),
    });
    await engine.replay(run.id, { fromStep: "collect-0" });
    await waitForRun(engine, run, (i) => i.status === "completed", { what: "completed again" });
    expect(await run.result({ timeout: 5000 })).toEqual([[1, 2, 3]]);
  });

  it("refuses a count that is not a whole number from 1 to the limit", async () => {
    const bad = workflow({
      queues: { items: z.object({ n: z.number() }) },
      run: async (ctx) => ctx.queue.nextBatch("b", { queue: "items", count: 0 }),
    });
    const engine = closeLater(await setup({ use: { bad } }).start({ database: await database() }));
    const run = await engine.getOrCreate("bad", "zero");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(
      /count to be a whole number from 1 to 1000, got 0\./,
    );
  });
});
