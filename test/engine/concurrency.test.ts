// Concurrency limits in one process, on SQLite and PostgreSQL: at most `limit` runs of a key execute at once,
// the others stay pending and start in creation order; sleeping and waiting runs hold no slot, retrying ones
// do; a key function that throws or returns a non-string refuses the run, which is not created.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const stores = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

/** Steps that block until the test opens their gate; `started` lists run keys in the order they began. */
function gates() {
  const open = new Map<string, () => void>();
  const waiting = new Map<string, Promise<void>>();
  const started: string[] = [];
  const arrived = new Map<string, () => void>();
  return {
    started,
    /** Resolves when the run's step has begun. */
    reached(key: string): Promise<void> {
      if (started.includes(key)) return Promise.resolve();
      return new Promise((r) => arrived.set(key, r));
    },
    enter(key: string): Promise<void> {
      started.push(key);
      arrived.get(key)?.();
      let p = waiting.get(key);
      if (!p) {
        p = new Promise<void>((r) => open.set(key, r));
        waiting.set(key, p);
      }
      return p;
    },
    release(key: string): void {
      const r = open.get(key);
      if (!r) throw new Error(`run ${key} has not started`);
      r();
    },
  };
}

describe.each(stores)("concurrency limits on $name", ({ database }) => {
  it("runs over the limit stay pending and start in creation order; other keys are not held up", async () => {
    const g = gates();
    const limited = workflow({
      concurrency: { limit: 2, key: (input: { customerId: string; n: number }) => input.customerId },
      run: async (ctx, input: { customerId: string; n: number }) => {
        await ctx.step("work", () => g.enter(ctx.key));
        return input.n;
      },
    });
    const engine = closeLater(await setup({ use: { limited } }).start({ database: await database() }));
    const runs = [];
    for (let n = 0; n < 6; n++)
      runs.push(await engine.getOrCreate("limited", `c9-${n}`, { customerId: "c-9", n }));
    const other = await engine.getOrCreate("limited", "c1-0", { customerId: "c-1", n: 99 });
    await Promise.all([g.reached("c9-0"), g.reached("c9-1"), g.reached("c1-0")]);
    await engine.tick();
    expect(g.started.filter((k) => k.startsWith("c9")).sort()).toEqual(["c9-0", "c9-1"]);
    for (const r of runs.slice(2)) expect((await r.info()).status).toBe("pending");
    expect((await internals(engine).store.getRun(runs[2]!.id))?.concurrencyKey).toBe("c-9");

    // Each end lets exactly the oldest queued run in.
    for (let n = 0; n < 6; n++) {
      g.release(`c9-${n}`);
      expect(await runs[n]!.result({ timeout: 20_000 })).toBe(n);
      if (n + 2 < 6) await g.reached(`c9-${n + 2}`);
      await engine.tick();
      const executing = await Promise.all(runs.map(async (r) => (await r.info()).status));
      expect(executing.filter((s) => s === "running").length).toBeLessThanOrEqual(2);
    }
    expect(g.started.filter((k) => k.startsWith("c9"))).toEqual([
      "c9-0",
      "c9-1",
      "c9-2",
      "c9-3",
      "c9-4",
      "c9-5",
    ]);
    g.release("c1-0");
    expect(await other.result({ timeout: 20_000 })).toBe(99);
  }, 60_000);

  it("a run waiting for approval or sleeping holds no slot; a retrying one does", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    let failures = 1;
    const one = workflow({
      concurrency: { limit: 1 },
      queues: { decisions: z.object({ approve: z.boolean() }) },
      run: async (ctx, input: { mode: "approve" | "sleep" | "retry" | "plain" }) => {
        if (input.mode === "approve") {
          const d = await ctx.queue.next("await-approval", { queue: "decisions" });
          return d.approve ? "approved" : "rejected";
        }
        if (input.mode === "sleep") {
          await ctx.sleep("nap", "1h");
          return "slept";
        }
        if (input.mode === "retry") {
          await ctx.step(
            "flaky",
            () => {
              if (failures-- > 0) throw new Error("down for a while");
              return "up";
            },
            { backoff: "1h" },
          );
          return "retried";
        }
        return "plain";
      },
    });
    const engine = closeLater(await setup({ use: { one } }).start({ database: await database(), clock }));
    const approval = await engine.getOrCreate("one", "approve", { mode: "approve" });
    await waitForStatus(engine, approval, ["waiting"]);
    const sleeper = await engine.getOrCreate("one", "sleep", { mode: "sleep" });
    await waitForStatus(engine, sleeper, ["sleeping"]);
    // Neither holds the one slot: a plain run starts and completes meanwhile.
    expect(
      await (await engine.getOrCreate("one", "plain-1", { mode: "plain" })).result({ timeout: 20_000 }),
    ).toBe("plain");

    const retrying = await engine.getOrCreate("one", "retry", { mode: "retry" });
    await waitForStatus(engine, retrying, ["retrying"]);
    const blocked = await engine.getOrCreate("one", "plain-2", { mode: "plain" });
    await engine.tick();
    await engine.tick();
    expect((await blocked.info()).status).toBe("pending");
    // The approval arrives while the retry holds the slot: the approved run queues behind it too.
    await approval.send("decisions", { approve: true });
    await engine.tick();
    expect((await approval.info()).status).toBe("waiting");

    clock.advance(3_600_000 + 1);
    await engine.tick();
    expect(await retrying.result({ timeout: 20_000 })).toBe("retried");
    // Queued in creation order: the approval (oldest), the sleeper (its hour is up too), then plain-2.
    expect(await approval.result({ timeout: 20_000 })).toBe("approved");
    expect(await sleeper.result({ timeout: 20_000 })).toBe("slept");
    expect(await blocked.result({ timeout: 20_000 })).toBe("plain");
  }, 60_000);

  it("a key function that throws or returns a non-string refuses the run, which is not created", async () => {
    const keyed = workflow({
      concurrency: { limit: 1, key: (input: { customer?: unknown }) => input.customer as string },
      run: async () => "done",
    });
    const throwing = workflow({
      concurrency: {
        limit: 1,
        key: () => {
          throw new Error("no customer on this input");
        },
      },
      run: async (_ctx, _input: { customer?: unknown }) => "done",
    });
    const engine = closeLater(
      await setup({ use: { keyed, throwing } }).start({ database: await database() }),
    );
    await expect(engine.getOrCreate("keyed", "k-num", { customer: 42 })).rejects.toMatchObject({
      code: "INVALID_CONCURRENCY_KEY",
      message: expect.stringMatching(/Run "keyed\/k-num" was not created: .* returned number, not a string/),
    });
    await expect(engine.getOrCreate("keyed", "k-none", {})).rejects.toMatchObject({
      code: "INVALID_CONCURRENCY_KEY",
      message: expect.stringMatching(/returned undefined/),
    });
    await expect(engine.getOrCreate("throwing", "t-1", {})).rejects.toMatchObject({
      code: "INVALID_CONCURRENCY_KEY",
      message: expect.stringMatching(/threw for this input: no customer on this input/),
    });
    const store = internals(engine).store;
    expect(await store.findRun("keyed", "k-num")).toBeUndefined();
    expect(await store.findRun("keyed", "k-none")).toBeUndefined();
    expect(await store.findRun("throwing", "t-1")).toBeUndefined();
    // A good key creates the run, with its key recorded.
    const ok = await engine.getOrCreate("keyed", "k-ok", { customer: "c-9" });
    expect(await ok.result({ timeout: 20_000 })).toBe("done");
    expect(await store.findRun("keyed", "k-ok")).toMatchObject({
      concurrencyKey: "c-9",
      concurrencyLimit: 1,
    });
  }, 60_000);
});

describe("workflow({ concurrency }) checks its options", () => {
  it("refuses a limit that is not a whole number from 1 and a key that is not a function", () => {
    expect(() => workflow({ concurrency: { limit: 0 }, run: async () => 1 })).toThrow(/whole number from 1/);
    expect(() => workflow({ concurrency: { limit: 1.5 }, run: async () => 1 })).toThrow(
      /whole number from 1/,
    );
    expect(() =>
      workflow({ concurrency: { limit: 2, key: "customerId" as never }, run: async () => 1 }),
    ).toThrow(/must be a function/);
  });
});
