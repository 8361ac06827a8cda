import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, FatalError, Loop, setup, workflow } from "../../src/index.js";
import { closeLater, entryReached, tempDb } from "../helpers.js";

const queues = { approvals: z.object({ approved: z.boolean(), by: z.string() }) };

/** Version 1 has a bug in its third step; version 2 fixes it. Both record what really ran. */
function payoutVersions(timeline: string[]) {
  const body = (fixed: boolean) => async (ctx: any, input: { amount: number }) => {
    await ctx.step("load", (s: any) => {
      timeline.push("load");
      s.state.amount = input.amount;
      return input.amount;
    });
    const decision = await ctx.queue.next("await-approval", { queue: "approvals" });
    await ctx.step("record-approval", (s: any) => {
      timeline.push(`record-approval:${decision.by}`);
      s.state.approvedBy = decision.by;
    });
    return ctx.step(
      "pay",
      (s: any) => {
        timeline.push(fixed ? "pay-v2" : "pay-v1");
        if (!fixed) throw new TypeError("Cannot read properties of undefined (reading 'iban')");
        s.state.paid = true;
        return { paid: s.state.amount };
      },
      { retries: 0 },
    );
  };
  const state = { amount: 0, approvedBy: null as string | null, paid: false };
  return {
    v1: workflow({ version: 1, state, queues, run: body(false) }),
    v2: workflow({ version: 2, state, queues, run: body(true) }),
  };
}

describe("fix and replay", () => {
  it("replays a failed run on the fixed version without re-running what succeeded; from an earlier step it puts the approval back", async () => {
    const db = tempDb();
    const timeline: string[] = [];
    const { v1, v2 } = payoutVersions(timeline);

    const before = await setup({ use: { payout: v1 } }).start({ database: db });
    const run = await before.getOrCreate("payout", "p-1", { amount: 120 });
    await run.send("approvals", { approved: true, by: "ann" });
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(/reading 'iban'/);
    expect(timeline).toEqual(["load", "record-approval:ann", "pay-v1"]);
    await before.close();

    // Version 2 ships beside version 1.
    const engine = closeLater(await setup({ use: { payout: [v1, v2] } }).start({ database: db }));
    const dry = await engine.replay(run.id, { dryRun: true });
    expect(dry).toMatchObject({
      run: "payout/p-1",
      from: { path: "pay" },
      discard: [{ path: "pay", kind: "step", status: "failed" }],
      reopen: [],
      restoreMessages: [],
      restoreState: { amount: 120, approvedBy: "ann", paid: false },
      version: { from: 1, to: 2 },
      dryRun: true,
      applied: false,
    });
    expect(await engine.history(run.id)).toHaveLength(4); // a dry run changes nothing

    const plan = await engine.replay(run.id);
    expect(plan).toMatchObject({ applied: true, from: { path: "pay" } });
    expect(await engine.result(run.id, { timeout: 5000 })).toEqual({ paid: 120 });
    expect(timeline).toEqual(["load", "record-approval:ann", "pay-v1", "pay-v2"]);
    const info = await engine.info(run.id);
    expect(info.version).toBe(2);
    expect(info.state).toEqual({ amount: 120, approvedBy: "ann", paid: true });

    // Rerun from step two: the approval goes back on its queue and is consumed again.
    const dry2 = await engine.replay(run.id, { fromStep: "await-approval", dryRun: true });
    expect(dry2).toMatchObject({
      from: { path: "await-approval" },
      discard: [{ path: "await-approval" }, { path: "record-approval" }, { path: "pay" }],
      restoreMessages: [{ queue: "approvals", body: { approved: true, by: "ann" } }],
      restoreState: { amount: 120, approvedBy: null, paid: false },
      version: { from: 2, to: 2 },
    });
    await engine.replay(run.id, { fromStep: "await-approval" });
    expect(await engine.result(run.id, { timeout: 5000 })).toEqual({ paid: 120 });
    expect(timeline).toEqual([
      "load",
      "record-approval:ann",
      "pay-v1",
      "pay-v2",
      "record-approval:ann",
      "pay-v2",
    ]);
    expect(await engine.info(run.id).then((i) => i.state)).toEqual({
      amount: 120,
      approvedBy: "ann",
      paid: true,
    });
    const messages = await internals(engine).store.listMessages(run.id, { includeConsumed: true, limit: 10 });
    expect(messages).toHaveLength(1);
    expect(messages[0]!.consumedAt).not.toBeNull();

    // Every replay is recorded in history.
    const history = await engine.history(run.id);
    const replays = history.filter((e) => e.kind === "replay");
    expect(replays.map((r) => r.detail)).toMatchObject([
      {
        from: { path: "pay" },
        previousStatus: "failed",
        version: { from: 1, to: 2 },
        discarded: [{ path: "pay", status: "failed", attempts: 1 }],
      },
      { from: { path: "await-approval" }, previousStatus: "completed", restoredMessages: [messages[0]!.id] },
    ]);
    expect(history.filter((e) => e.kind !== "replay").map((e) => `${e.path}:${e.status}`)).toEqual([
      "load:completed",
      "await-approval:completed",
      "record-approval:completed",
      "pay:completed",
    ]);
  });

  it("refuses a replay whose kept history does not match the new code, naming the earliest possible start", async () => {
    const db = tempDb();
    const v1 = workflow({
      version: 1,
      run: async (ctx) => {
        await ctx.step("a", () => 1);
        await ctx.step("b", () => 2);
        await ctx.step(
          "c",
          () => {
            throw new Error("bug");
          },
          { retries: 0 },
        );
      },
    });
    const v2 = workflow({
      version: 2,
      run: async (ctx) => {
        await ctx.step("a", () => 1);
        // The code's own wait between steps (a config load, a timer) must not end the check early.
        await new Promise((r) => setTimeout(r, 30));
        await ctx.step("b-renamed", () => 2);
        await ctx.step("c", () => 3);
      },
    });
    const first = await setup({ use: { wf: v1 } }).start({ database: db });
    const run = await first.getOrCreate("wf", "k");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(/bug/);
    await first.close();
    const engine = closeLater(await setup({ use: { wf: [v1, v2] } }).start({ database: db }));
    await expect(engine.replay(run.id, { dryRun: true })).rejects.toThrow(
      /Cannot replay "wf\/k" on version 2: .*history holds a step named "b"; the code asked for one named "b-renamed".*Replay from "b" or earlier instead/,
    );
    await expect(engine.replay(run.id)).rejects.toThrow(
      /Cannot replay "wf\/k" on version 2: .*history holds a step named "b"; the code asked for one named "b-renamed".*Replay from "b" or earlier instead/,
    );
    const plan = await engine.replay(run.id, { fromStep: "b", dryRun: true });
    expect("checkedAgainstCode" in plan && plan.checkedAgainstCode).toBe(true);
    expect((await engine.info(run.id)).status).toBe("failed"); // nothing changed
    await engine.replay(run.id, { fromStep: "b" });
    await engine.result(run.id, { timeout: 5000 });
    expect((await engine.history(run.id)).filter((e) => e.kind === "step").map((e) => e.path)).toEqual([
      "a",
      "b-renamed",
      "c",
    ]);
  });

  it("replays from an entry inside a join branch, reopening the join and keeping the other branch", async () => {
    const timeline: string[] = [];
    let failMail = true;
    const wf = workflow({
      run: async (ctx) =>
        ctx.join("notify", {
          chat: (c) => c.step("post", () => timeline.push("post")),
          mail: (c) =>
            c.step(
              "send",
              () => {
                timeline.push("send");
                if (failMail) throw new Error("smtp");
                return "sent";
              },
              { retries: 0 },
            ),
        }),
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(/smtp/);
    failMail = false;
    const plan = await engine.replay(run.id, { dryRun: true });
    expect(plan).toMatchObject({
      from: { path: "notify[mail]/send" },
      reopen: [{ path: "notify", kind: "join" }],
    });
    await engine.replay(run.id);
    expect(await run.result({ timeout: 5000 })).toEqual({ chat: 1, mail: "sent" });
    expect(timeline).toEqual(["post", "send", "send"]);
  });

  it("keeps what a kept branch changed when a branch beside it is replayed, even if it committed later", async () => {
    // "slow" commits after "fast", and "boom" fails after "slow" committed: each waits for the other's commit.
    let fastCommitted!: Promise<unknown>;
    let slowCommitted!: Promise<unknown>;
    let boom = true;
    const wf = workflow({
      state: { x: "init", y: 0 },
      run: async (ctx) =>
        ctx.join("j", {
          a: (c) =>
            c.step("slow", async (s) => {
              await fastCommitted;
              s.state.x = "A";
            }),
          b: async (c) => {
            await c.step("fast", (s) => {
              s.state.x = "B";
              s.state.y = 1;
            });
            await c.step(
              "boom",
              async () => {
                if (boom) {
                  await slowCommitted;
                  throw new FatalError("boom");
                }
              },
              { retries: 0 },
            );
          },
        }),
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    fastCommitted = entryReached(engine, "j[b]/fast");
    slowCommitted = entryReached(engine, "j[a]/slow");
    const run = await engine.getOrCreate("wf", "k");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(/boom/);
    expect(await run.state()).toEqual({ x: "A", y: 1 }); // "slow" committed after "fast"
    const plan = await engine.replay(run.id, { fromStep: "j[b]/fast", dryRun: true });
    // Without "fast" and what followed it: the initial state plus what "slow" changed.
    expect("restoreState" in plan && plan.restoreState).toEqual({ x: "A", y: 0 });
    boom = false;
    await engine.replay(run.id, { fromStep: "j[b]/fast" });
    await engine.result(run.id, { timeout: 5000 });
    expect(await run.state()).toEqual({ x: "B", y: 1 }); // "fast" ran again, after "slow"
  });

  it("replays from inside a loop iteration, restarting that iteration with the loop state it began with", async () => {
    const seen: number[] = [];
    let bad = true;
    const wf = workflow({
      run: async (ctx) =>
        ctx.loop("count", {
          state: { n: 0 },
          run: async (c, s) => {
            await c.step(
              "see",
              () => {
                seen.push(s.n);
                if (s.n === 2 && bad) throw new Error("bad two");
              },
              { retries: 0 },
            );
            return s.n >= 3 ? Loop.break(s.n) : Loop.continue({ n: s.n + 1 });
          },
        }),
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(/bad two/);
    bad = false;
    const plan = await engine.replay(run.id, { fromStep: "count#1/see", dryRun: true });
    expect(plan).toMatchObject({ reopen: [{ path: "count", kind: "loop" }] });
    expect(plan).toHaveProperty("discard", [
      expect.objectContaining({ path: "count#1/see" }),
      expect.objectContaining({ path: "count#2/see" }),
    ]);
    await engine.replay(run.id, { fromStep: "count#1/see" });
    expect(await run.result({ timeout: 5000 })).toBe(3);
    expect(seen).toEqual([0, 1, 2, 1, 2, 3]);
  });

  it("refuses a replay while the run executes, and replays a cancelled run", async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let started!: () => void;
    const blockStarted = new Promise<void>((r) => {
      started = r;
    });
    const wf = workflow({
      run: async (ctx) => {
        await ctx.step("block", () => {
          started();
          return gate;
        });
        await ctx.sleep("nap", "1h");
        return "done";
      },
    });
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    await blockStarted; // the run executes here while its step function runs
    await expect(engine.replay(run.id, { fromStep: "block" })).rejects.toThrow(
      /is executing right now, so it cannot be replayed/,
    );
    release();
    await waitForStatus(engine, run, ["sleeping"]);
    expect(await run.cancel()).toBe("cancelled");
    expect((await run.history()).find((e) => e.name === "nap")!.status).toBe("cancelled");
    const plan = await engine.replay(run.id);
    expect(plan).toMatchObject({ from: { path: "nap" }, discard: [{ path: "nap", status: "cancelled" }] });
    await waitForStatus(engine, run, ["sleeping"]);
    clock.advance(3_600_000);
    expect(await run.result({ timeout: 5000 })).toBe("done");
  });

  it("gives each entry's state before and after", async () => {
    const wf = workflow({
      state: { a: 0, b: "x" },
      run: async (ctx) => {
        await ctx.step("one", (s) => {
          s.state.a = 1;
        });
        await ctx.step("noop", () => null);
        await ctx.step("two", (s) => {
          s.state.a = 2;
          s.state.b = "y";
        });
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    await run.result({ timeout: 5000 });
    const states = await Promise.all(["one", "noop", "two"].map((p) => engine.entry(run.id, p)));
    expect(states.map((s) => [s.stateBefore, s.stateAfter])).toEqual([
      [
        { a: 0, b: "x" },
        { a: 1, b: "x" },
      ],
      [
        { a: 1, b: "x" },
        { a: 1, b: "x" },
      ],
      [
        { a: 1, b: "x" },
        { a: 2, b: "y" },
      ],
    ]);
    expect(states[2]!.stateChange).toEqual({
      "/a": { before: 1, after: 2 },
      "/b": { before: "x", after: "y" },
    });
    await expect(engine.entry(run.id, "three")).rejects.toThrow(
      /has no entry "three". Its root entries are: one, noop, two/,
    );
  });
});

describe("versions", () => {
  it("a run keeps the version it started on across restarts; new runs take the latest", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    const make = (version: number) =>
      workflow({
        version,
        run: async (ctx) => {
          await ctx.sleep("nap", "1m");
          return ctx.step("which", () => `v${version}`);
        },
      });
    const v1 = make(1);
    const v2 = make(2);
    const first = await setup({ use: { wf: v1 } }).start({ database: db, clock });
    await waitForStatus(first, await first.getOrCreate("wf", "old"), ["sleeping"]);
    await first.close();
    const engine = closeLater(await setup({ use: { wf: [v1, v2] } }).start({ database: db, clock }));
    const fresh = await engine.getOrCreate("wf", "new");
    await waitForStatus(engine, fresh, ["sleeping"]);
    const listed = await engine.listWorkflows();
    expect(listed[0]).toMatchObject({
      name: "wf",
      versions: [1, 2],
      latest: 2,
      runsByVersion: { "1": { sleeping: 1 }, "2": { sleeping: 1 } },
    });
    clock.advance(60_000);
    expect(await engine.get("wf", "old").then((h) => h.result({ timeout: 5000 }))).toBe("v1");
    expect(await fresh.result({ timeout: 5000 })).toBe("v2");
  });
});
