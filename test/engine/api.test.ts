import fs from "node:fs";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForRun, waitForStatus } from "../../fixtures/wait.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb, untilWritten } from "../helpers.js";

const counter = workflow({
  state: { count: 0, label: "" },
  queues: { add: z.object({ by: z.number().int() }) },
  run: async (ctx, input: { label: string }) => {
    await ctx.step("label", (s) => {
      s.state.label = input.label;
    });
    for (let i = 0; i < 3; i++) {
      const m = await ctx.queue.next(`add-${i}`, { queue: "add" });
      await ctx.step(`apply-${i}`, (s) => {
        s.state.count += m.by;
      });
    }
    return ctx.state.count;
  },
  actions: {
    getState: (c) => c.state,
    double: (c, factor: number) => c.state.count * factor,
    bump: async (c) => {
      await c.send("add", { by: 1 });
      return "sent";
    },
  },
});

describe("run handles", () => {
  it("getOrCreate is idempotent by key and keeps the first input", async () => {
    const engine = closeLater(await setup({ use: { counter } }).start({ database: tempDb() }));
    const a = await engine.getOrCreate("counter", "c1", { label: "first" });
    const b = await engine.getOrCreate("counter", "c1", { label: "second" });
    expect(b.id).toBe(a.id);
    await waitForStatus(engine, a, ["waiting"]);
    expect((await a.info()).input).toEqual({ label: "first" });
    expect(await a.state()).toEqual({ count: 0, label: "first" });
  });

  it("actions read committed state and can message the run", async () => {
    const engine = closeLater(await setup({ use: { counter } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("counter", "c2", { label: "x" });
    await run.send("add", { by: 5 });
    await waitForRun(engine, run, async () => (await run.state()).count === 5, { what: "the first add" });
    expect(await run.action("double", 3)).toBe(15);
    expect(await run.action("bump")).toBe("sent");
    await run.send("add", { by: 10 });
    expect(await run.result({ timeout: 5000 })).toBe(16);
    expect(await run.action("getState")).toEqual({ count: 16, label: "x" });
    // @ts-expect-error: an unknown action, on purpose
    await expect(run.action("nope")).rejects.toThrow(
      /has no action "nope". Its actions are: getState, double, bump/,
    );
  });

  it("unknown workflows, bad keys and bad inputs are refused before anything is written", async () => {
    const db = tempDb();
    const engine = closeLater(await setup({ use: { counter } }).start({ database: db }));
    await expect(engine.getOrCreate("countr" as never, "k", {} as never)).rejects.toThrow(
      /There is no workflow "countr". Registered workflows: counter/,
    );
    await expect(engine.getOrCreate("counter", "", { label: "x" })).rejects.toThrow(/Invalid run key ""/);
    await expect(engine.getOrCreate("counter", "..", { label: "x" })).rejects.toThrow(/not "." or ".."/);
    await expect(engine.getOrCreate("counter", "k", { label: 1n } as never)).rejects.toThrow(
      /input of run "counter\/k" is not JSON-serialisable: the value at label is a bigint/,
    );
    await expect(engine.get("counter", "missing")).rejects.toThrow(/There is no run "counter\/missing"/);
    expect((await engine.listRuns()).runs).toHaveLength(0);
  });

  it("bad handle options and workflow definitions are refused where they are written", async () => {
    const engine = closeLater(await setup({ use: { counter } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("counter", "opts", { label: "x" });
    await expect(run.result({ timeout: -1 })).rejects.toThrow(/result\(\{ timeout \}\) takes milliseconds/);
    await expect(run.result({ timeout: "1s" as never })).rejects.toThrow(/got "1s"/);
    await expect(run.history({ limit: -1 })).rejects.toThrow(/Invalid option limit: -1/);
    expect(() => workflow({ queues: { q: { notZod: true } as never }, run: async () => {} })).toThrow(
      /queue "q" needs a zod schema/,
    );
    expect(() => workflow({ actions: { a: 5 as never }, run: async () => {} })).toThrow(
      /action "a" must be a function/,
    );
    expect(() => workflow({ queues: [] as never, run: async () => {} })).toThrow(
      /takes an object; got an array/,
    );
    const { attach } = await import("../../src/index.js");
    const attached = closeLater(await attach({ database: tempDb() }));
    await expect(attached.getOrCreate("counter", "k")).rejects.toThrow(
      /This engine has no workflows \(attach\(\) reads and messages runs that another process executes\)/,
    );
  });

  it("publishes each queue's schema as what a sender may send (defaults optional, extra keys allowed)", async () => {
    const desk = workflow({
      queues: { decision: z.object({ approve: z.boolean(), by: z.string().default("anyone") }) },
      run: async (ctx) => ctx.queue.next("d", { queue: "decision" }),
    });
    const engine = closeLater(await setup({ use: { desk } }).start({ database: tempDb() }));
    const schema = (await engine.published()).get("desk@1")!.queues.decision as Record<string, unknown>;
    expect(schema.required).toEqual(["approve"]);
    expect(schema.additionalProperties).toBeUndefined();
  });

  it("after close, every call says the engine is closed, reads included", async () => {
    const engine = await setup({ use: { counter } }).start({ database: tempDb() });
    const run = await engine.getOrCreate("counter", "c", { label: "x" });
    await engine.close();
    for (const call of [
      () => run.result({ timeout: 100 }),
      () => run.info(),
      () => run.status(),
      () => run.state(),
      () => run.history(),
      () => engine.listRuns(),
      () => engine.listWorkflows(),
      () => run.send("add", { by: 1 }),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: "ENGINE_CLOSED" });
    }
  });

  it("result() times out with the run's status, and cancel stops a waiting run", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { counter } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("counter", "c3", { label: "x" });
    await waitForStatus(engine, run, ["waiting"]);
    let settled = false;
    const result = run.result({ timeout: 50 }).finally(() => {
      settled = true;
    });
    const timedOut = expect(result).rejects.toThrow(/did not finish within 50 ms \(it is waiting\)/);
    clock.advance(49);
    await engine.tick();
    expect(settled).toBe(false); // 49 ms of the engine's clock: not yet
    clock.advance(1);
    await timedOut;
    expect(await run.cancel()).toBe("cancelled");
    await expect(run.result({ timeout: 1000 })).rejects.toThrow(/was cancelled/);
    const wait = (await run.history()).find((e) => e.name === "add-0")!;
    expect(wait.status).toBe("cancelled");
    await expect(run.send("add", { by: 1 })).rejects.toThrow(/is cancelled, so no code will read a message/);
  });

  it("cancel during a running step fires the step's AbortSignal and keeps history", async () => {
    let aborted = false;
    let started!: () => void;
    const slowStarted = new Promise<void>((r) => {
      started = r;
    });
    const slow = workflow({
      run: async (ctx) => {
        await ctx.step("quick", () => 1);
        await ctx.step(
          "slow",
          (s) =>
            new Promise((resolve) => {
              started();
              s.signal.addEventListener("abort", () => {
                aborted = true;
                resolve("stopped");
              });
            }),
        );
      },
    });
    const engine = closeLater(await setup({ use: { slow } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("slow", "s");
    await slowStarted;
    // Its start marker (which holds the attempt) is written a turn or two later, with no event of its own.
    await untilWritten(
      async () => (await run.history()).some((e) => e.name === "slow" && e.status === "running"),
      "the slow step's start marker",
    );
    expect(await run.cancel()).toBe("cancelled");
    expect(aborted).toBe(true);
    expect(await run.status()).toBe("cancelled");
    const history = await run.history();
    expect(history.map((e) => [e.name, e.status])).toEqual([
      ["quick", "completed"],
      ["slow", "cancelled"],
    ]);
    const slowEntry = history[1]!;
    expect(slowEntry.attempts).toEqual([
      { n: 1, startedAt: expect.any(Number), status: "cancelled", endedAt: slowEntry.endedAt },
    ]);
  });

  it("lists runs newest first with filters and opaque cursors", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { counter } }).start({ database: tempDb(), clock }));
    for (let i = 0; i < 5; i++) {
      await engine.getOrCreate("counter", `k${i}`, { label: "x" });
      clock.advance(1000);
    }
    const page1 = await engine.listRuns({ limit: 2 });
    expect(page1.runs.map((r) => r.key)).toEqual(["k4", "k3"]);
    const page2 = await engine.listRuns({ limit: 2, cursor: page1.nextCursor! });
    expect(page2.runs.map((r) => r.key)).toEqual(["k2", "k1"]);
    const page3 = await engine.listRuns({ limit: 2, cursor: page2.nextCursor! });
    expect(page3.runs.map((r) => r.key)).toEqual(["k0"]);
    expect(page3.nextCursor).toBeNull();
    expect((await engine.listRuns({ keyContains: "3" })).runs.map((r) => r.key)).toEqual(["k3"]);
    await expect(engine.listRuns({ cursor: "garbage" })).rejects.toThrow(/Invalid cursor/);
    await expect(engine.listRuns({ status: "sleepy" as never })).rejects.toThrow(
      /Unknown run status "sleepy"; statuses are: pending, running/,
    );
  });
});

describe("start options", () => {
  it("refuses unknown names and out-of-range values before opening anything, naming the option", async () => {
    const registry = setup({ use: { counter } });
    const db = tempDb();
    const bad: Array<[Record<string, unknown>, RegExp]> = [
      [{ database: db, leaseMs: 1 }, /option leaseMs takes a whole number of milliseconds from 1,000 to/],
      [{ database: db, leaseMs: Number.NaN }, /option leaseMs .* got NaN/],
      [
        { database: db, pollMs: 0 },
        /option pollMs takes a whole number of milliseconds from 5 to 86,400,000/,
      ],
      [{ database: db, busyTimeoutMs: -1 }, /option busyTimeoutMs/],
      [
        { database: db, durability: "extreme" },
        /option durability takes "normal" \(the default\) or "full"; got "extreme"/,
      ],
      [{ database: db, maxActiveRuns: -1 }, /option maxActiveRuns takes a whole number of runs, 0 or more/],
      [{ databse: db }, /unknown option "databse". Its options are: database, clock, durability/],
      [{ database: "" }, /option database takes a SQLite file path/],
      [{ database: db, ownerId: "" }, /option ownerId/],
      [{ database: "pg://localhost/test" }, /Unsupported database URL scheme "pg:"/],
    ];
    for (const [options, message] of bad) {
      await expect(registry.start(options as never), JSON.stringify(options)).rejects.toThrow(message);
    }
    expect(fs.existsSync(db)).toBe(false);
    await expect(registry.start("app.db" as never)).rejects.toThrow(/takes an options object/);
    const { attach } = await import("../../src/index.js");
    await expect(attach({ database: db, leaseMs: 5 })).rejects.toThrow(/attach\(\): option leaseMs/);
    const ok = closeLater(await registry.start({ database: db, leaseMs: 1000, pollMs: 5, maxActiveRuns: 0 }));
    expect(await (await ok.getOrCreate("counter", "c", { label: "x" })).status()).toBe("pending");
  });
});

describe("storage", () => {
  it("refuses a file that is not a database, a foreign database and a newer schema, changing none of them", async () => {
    const registry = setup({ use: { counter } });
    const text = tempDb();
    fs.writeFileSync(
      text,
      "hello, this is not sqlite at all, just some text that is long enough............",
    );
    await expect(registry.start({ database: text })).rejects.toThrow(
      /is not a SQLite database .*Waymark did not change it/,
    );
    expect(fs.readFileSync(text, "utf8")).toMatch(/^hello/);

    const foreign = tempDb();
    const f = new Database(foreign);
    f.exec("CREATE TABLE customers (id INTEGER)");
    f.close();
    await expect(registry.start({ database: foreign })).rejects.toThrow(
      /a SQLite database of something else \(it has tables customers/,
    );

    const newer = tempDb();
    const n = new Database(newer);
    n.pragma("user_version = 99");
    n.close();
    await expect(registry.start({ database: newer })).rejects.toThrow(
      /written by a newer Waymark \(schema version 99/,
    );
  });

  it("refuses to start when live runs need a version the registry lacks", async () => {
    const db = tempDb();
    const v1 = workflow({
      version: 1,
      queues: { go: z.object({}) },
      run: async (ctx) => {
        await ctx.queue.next("wait", { queue: "go" });
      },
    });
    const first = await setup({ use: { wf: v1 } }).start({ database: db });
    const run = await first.getOrCreate("wf", "old-run");
    await waitForStatus(first, run, ["waiting"]);
    await first.close();
    const v2 = workflow({ version: 2, queues: { go: z.object({}) }, run: async () => {} });
    await expect(setup({ use: { wf: v2 } }).start({ database: db })).rejects.toThrow(
      /lacks workflow versions that live runs still need: wf version 1 \(1 live run: old-run\)/,
    );
    const both = closeLater(await setup({ use: { wf: [v1, v2] } }).start({ database: db }));
    const again = await both.get("wf", "old-run");
    expect((await again.info()).version).toBe(1);
    expect((await both.getOrCreate("wf", "new-run").then((h) => h.info())).version).toBe(2);
  });
});
