import { describe, expect, it } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, runsReached, tempDb } from "../helpers.js";

describe("resume after restart", () => {
  it("10,000 sleeping runs hold no memory, and resume on time after a restart", async () => {
    const db = tempDb();
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    let woke = 0;
    const napper = workflow({
      run: async (ctx, input: { i: number }) => {
        await ctx.sleep("nap", "1h");
        await ctx.step("wake", () => {
          woke++;
        });
        return input.i;
      },
    });
    const registry = setup({ use: { napper } });
    const first = await registry.start({ database: db, clock });
    const N = 10_000;
    const asleep = runsReached(first, "sleeping", N);
    const handles = await Promise.all(
      Array.from({ length: N }, (_, i) => first.getOrCreate("napper", `n${i}`, { i })),
    );
    await asleep;
    expect(internals(first).active.size).toBe(0);
    expect((await first.listRuns({ status: "sleeping", limit: 1000 })).runs).toHaveLength(1000);
    const counts = await first.listWorkflows();
    expect(counts[0]!.runs).toEqual({ sleeping: N });
    await first.close();

    const second = closeLater(await registry.start({ database: db, clock }));
    clock.advance(60 * 60_000 - 1);
    await second.tick();
    expect(woke).toBe(0);
    const done = runsReached(second, "completed", N);
    clock.advance(1);
    await done;
    expect((await second.listWorkflows())[0]!.runs).toEqual({ completed: N });
    expect(woke).toBe(N);
    expect(await second.get("napper", "n4242").then((h) => h.result())).toBe(4242);
    expect(handles).toHaveLength(N);
  }, 120_000);
});

describe("a claimed run whose load fails", () => {
  it("is kept (lease renewed) and loaded again shortly, not left to nobody", async () => {
    const { StorageError } = await import("../../src/index.js");
    const hop = workflow({
      run: async (ctx) => {
        await ctx.step("a", () => 1);
        await ctx.sleep("z", 50);
        await ctx.step("b", () => 2);
        return "done";
      },
    });
    const clock = new FakeClock();
    const engine = closeLater(
      await setup({ use: { hop } }).start({ database: tempDb(), clock, leaseMs: 2000 }),
    );
    // The database goes away for one load: the run woken from its sleep is claimed, then fails to load.
    const store = internals(engine).store as unknown as { loadRuns: (ids: number[]) => Promise<unknown> };
    const load = store.loadRuns.bind(store);
    let failures = 0;
    store.loadRuns = async (ids) => {
      if (ids.length > 0 && failures === 0) {
        failures++;
        throw new StorageError("STORAGE_UNAVAILABLE", "The database went away for a moment.");
      }
      return load(ids);
    };
    const errors: string[] = [];
    let loadFailed!: () => void;
    const failed = new Promise<void>((r) => {
      loadFailed = r;
    });
    engine.on((e) => {
      if (e.type !== "storage-error") return;
      errors.push(e.message);
      loadFailed();
    });
    const run = await engine.getOrCreate("hop", "h-1");
    await waitForStatus(engine, run, ["sleeping"]);
    clock.advance(50); // the sleep ends: the run is claimed, and its load fails
    await failed;
    expect(failures).toBe(1);
    // Kept: still this engine's, not handed back for anyone to take; it is loaded again a second later.
    expect((await engine.getRun(run.id))!.owner).toBe(internals(engine).owner);
    clock.advance(1000);
    expect(await run.result({ timeout: 10_000 })).toBe("done");
    expect(failures).toBe(1);
    expect(errors).toContain("The database went away for a moment.");
    expect((await run.history()).map((e) => [e.path, e.status])).toEqual([
      ["a", "completed"],
      ["z", "completed"],
      ["b", "completed"],
    ]);
  });
});

describe("a resumed run's replay at start", () => {
  it("is not interleaved with publishing the definitions: its first new step begins before they are read", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    let hang = true;
    const order: string[] = [];
    const long = workflow({
      run: async (ctx) => {
        for (let i = 0; i < 2000; i++) await ctx.step(`s${i}`, () => i);
        return ctx.step("live", () => {
          order.push("first new step");
          return hang ? new Promise<number>(() => {}) : 1;
        });
      },
    });
    const registry = setup({ use: { long } });
    const first = await registry.start({ database: db, clock });
    const run = await first.getOrCreate("long", "k");
    await waitForStatus(first, run, ["running"]);
    while (order.length === 0) await new Promise((r) => setImmediate(r));
    await first.close();
    hang = false;
    order.length = 0;

    const { openSqliteStore } = await import("../../src/storage/sqlite/sqlite-store.js");
    const store = openSqliteStore(db);
    const read = store.workflowMeta.bind(store);
    store.workflowMeta = async () => {
      order.push("definitions read");
      return read();
    };
    const second = closeLater(await registry.start({ database: store, clock }));
    order.push("start returned");
    expect(await (await second.get("long", "k")).result({ timeout: 5000 })).toBe(1);
    expect(order).toEqual(["first new step", "definitions read", "start returned"]);
  });
});
