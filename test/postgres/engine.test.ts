// The engine on PostgreSQL: the same workflows as on SQLite, and what several engines on one database
// promise each other (leases, takeover, one timer firing, wake-ups by notification, workflow subsets).

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { attach, FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, runsReached, settleWrites } from "../helpers.js";
import { tempSchema } from "./pg.js";

const HOUR = 3_600_000;

describe("the engine on PostgreSQL", () => {
  it("runs steps with state and retries, a durable sleep, a queue wait, and a replay after a fix", async () => {
    const { url } = await tempSchema();
    const clock = new FakeClock();
    const timeline: string[] = [];
    let broken = true;
    const order = workflow({
      state: { items: 0, approvedBy: null as string | null },
      queues: { decisions: z.object({ approve: z.boolean(), by: z.string() }) },
      run: async (ctx, input: { items: number }) => {
        await ctx.step(
          "count",
          (s) => {
            timeline.push("count");
            if (timeline.filter((t) => t === "count").length === 1) throw new Error("flaky");
            s.state.items = input.items;
          },
          { backoff: { initial: "1s", jitter: false } },
        );
        await ctx.sleep("cool-off", "1h");
        const d = await ctx.queue.next("await-decision", { queue: "decisions" });
        await ctx.step("record", (s) => {
          timeline.push(`record:${d.by}`);
          s.state.approvedBy = d.by;
        });
        return ctx.step(
          "ship",
          () => {
            timeline.push("ship");
            if (broken) throw new Error("carrier down");
            return { shipped: input.items };
          },
          { retries: 0 },
        );
      },
    });
    const engine = closeLater(await setup({ use: { order } }).start({ database: url, clock }));
    expect(internals(engine).store.kind).toBe("postgres");
    const run = await engine.getOrCreate("order", "o-1", { items: 3 });
    await waitForStatus(engine, run, ["retrying"]);
    clock.advance(1000);
    await waitForStatus(engine, run, ["sleeping"]);
    expect((await run.info()).wakeAt).toBe(clock.now() + HOUR);
    clock.advance(HOUR - 1);
    await engine.tick();
    expect(await run.status()).toBe("sleeping");
    clock.advance(1);
    await waitForStatus(engine, run, ["waiting"]);
    await run.send("decisions", { approve: true, by: "ann" }, { idempotencyKey: "d1" });
    expect(
      await run.send("decisions", { approve: false, by: "eve" }, { idempotencyKey: "d1" }),
    ).toMatchObject({
      duplicate: true,
    });
    await expect(run.result({ timeout: 10_000 })).rejects.toThrow(/carrier down/);

    broken = false;
    const plan = await engine.replay(run.id);
    expect(plan).toMatchObject({ applied: true, from: { path: "ship" } });
    expect(await run.result({ timeout: 10_000 })).toEqual({ shipped: 3 });
    expect(timeline).toEqual(["count", "count", "record:ann", "ship", "ship"]);
    expect(await run.state()).toEqual({ items: 3, approvedBy: "ann" });
    const history = await run.history();
    expect(history.map((e) => e.path)).toEqual([
      "count",
      "cool-off",
      "await-decision",
      "record",
      "~replay/replay-1",
      "ship",
    ]);
    expect(history[0]!.attempts!.map((a) => a.status)).toEqual(["failed", "completed"]);
  });

  it("a message from another process wakes a waiting run by notification, with the owner's polling off", async () => {
    const { url } = await tempSchema();
    const approval = workflow({
      queues: { decisions: z.object({ by: z.string() }) },
      run: async (ctx) => (await ctx.queue.next("await-decision", { queue: "decisions" })).by,
    });
    const owner = closeLater(await setup({ use: { approval } }).start({ database: url, pollMs: HOUR }));
    const runs = await Promise.all(["a", "b", "c"].map((k) => owner.getOrCreate("approval", k)));
    await Promise.all(runs.map((r) => waitForStatus(owner, r, ["waiting"])));
    const other = closeLater(await attach({ database: url }));
    for (const k of ["a", "b", "c"])
      await (await other.get("approval", k)).send("decisions", { by: `by-${k}` });
    expect(await Promise.all(runs.map((r) => r.result({ timeout: 20_000 })))).toEqual([
      "by-a",
      "by-b",
      "by-c",
    ]);
    // ...and the other process sees them finish, through the same notifications.
    expect(await (await other.get("approval", "b")).result({ timeout: 20_000 })).toBe("by-b");
  });

  it("a timer fires once across engines sharing the database and the clock", async () => {
    const { url } = await tempSchema();
    const clock = new FakeClock();
    const fired: string[] = [];
    const napper = workflow({
      run: async (ctx) => {
        await ctx.sleep("nap", "1h");
        await ctx.step("woke", (s) => {
          fired.push(s.key);
        });
      },
    });
    const registry = setup({ use: { napper } });
    const engines = [
      closeLater(await registry.start({ database: url, clock })),
      closeLater(await registry.start({ database: url, clock })),
      closeLater(await registry.start({ database: url, clock })),
    ];
    const keys = Array.from({ length: 60 }, (_, i) => `n${i}`);
    const asleep = runsReached(engines, "sleeping", 60);
    await Promise.all(keys.map((k, i) => engines[i % 3]!.getOrCreate("napper", k)));
    await asleep;
    expect((await engines[0]!.listRuns({ status: "sleeping", limit: 100 })).runs).toHaveLength(60);
    const done = runsReached(engines, "completed", 60);
    clock.advance(HOUR);
    await done;
    expect((await engines[0]!.listRuns({ status: "completed", limit: 100 })).runs).toHaveLength(60);
    expect(fired.sort()).toEqual([...keys].sort());
  });

  it("an engine with a subset of the workflows leaves the others to processes that have them", async () => {
    const { url } = await tempSchema();
    const clock = new FakeClock();
    const ranBy: string[] = [];
    const make = (tag: string) => ({
      invoice: workflow({
        run: async (ctx) => {
          await ctx.sleep("wait", "1m");
          return ctx.step("bill", () => ranBy.push(`invoice@${tag}`));
        },
      }),
      report: workflow({
        run: async (ctx) => {
          await ctx.sleep("wait", "1m");
          return ctx.step("write", () => ranBy.push(`report@${tag}`));
        },
      }),
    });
    const invoices = closeLater(
      await setup({ use: { invoice: make("invoices").invoice } }).start({ database: url, clock }),
    );
    const reportsFirst = await setup({ use: { report: make("reports-1").report } }).start({
      database: url,
      clock,
    });
    const inv = await invoices.getOrCreate("invoice", "i-1");
    const rep = await reportsFirst.getOrCreate("report", "r-1");
    await waitForStatus(reportsFirst, rep, ["sleeping"]);
    await waitForStatus(invoices, inv, ["sleeping"]);
    await reportsFirst.close(); // no process runs reports now

    clock.advance(60_000);
    expect(await inv.result({ timeout: 10_000 })).toBe(1);
    await invoices.tick();
    expect((await invoices.info(rep.id)).status).toBe("sleeping"); // due, but not this worker's to run
    expect(await internals(invoices).store.nextWakeAt(["invoice"])).toBeNull();

    const reports = closeLater(
      await setup({ use: { report: make("reports-2").report } }).start({ database: url, clock }),
    );
    expect(await (await reports.get("report", "r-1")).result({ timeout: 10_000 })).toBe(2);
    expect(ranBy).toEqual(["invoice@invoices", "report@reports-2"]);
  });

  it("takes over a run whose owner stopped renewing its lease, once the lease expires; the old owner's writes are refused", async () => {
    const { url } = await tempSchema();
    const clock = new FakeClock();
    const calls: string[] = [];
    let release!: () => void;
    const stuck = new Promise<void>((r) => {
      release = r;
    });
    let aStarted!: () => void;
    const startedOnA = new Promise<void>((r) => {
      aStarted = r;
    });
    const def = (tag: string) =>
      workflow({
        run: async (ctx) => {
          const out = await ctx.step("work", async () => {
            calls.push(tag);
            if (tag === "a") aStarted();
            if (tag === "a") await stuck; // machine A hangs here, its heartbeat silent (long lease, frozen clock)
            return tag;
          });
          await ctx.step("after", () => calls.push(`after@${tag}`));
          return out;
        },
      });
    const a = closeLater(
      await setup({ use: { job: def("a") } }).start({
        database: url,
        clock,
        leaseMs: HOUR,
        ownerId: "machine-a:1:a",
      }),
    );
    const b = closeLater(
      await setup({ use: { job: def("b") } }).start({
        database: url,
        clock,
        leaseMs: HOUR,
        ownerId: "machine-b:1:b",
      }),
    );
    const run = await a.getOrCreate("job", "j");
    await startedOnA;
    clock.advance(HOUR - 1);
    await b.tick();
    expect(calls).toEqual(["a"]); // still leased
    clock.advance(1);
    expect(await b.result(run.id, { timeout: 10_000 })).toBe("b");
    release(); // A wakes up: its record of the step is refused, and it stops executing the run
    await settleWrites(internals(a)); // its late record is refused: the lease is B's
    expect(internals(a).active.size).toBe(0);
    expect(calls).toEqual(["a", "b", "after@b"]);
    const history = await b.history(run.id);
    expect(history.map((e) => [e.path, e.status, e.output])).toEqual([
      ["work", "completed", "b"],
      ["after", "completed", 3],
    ]);
  });
});
