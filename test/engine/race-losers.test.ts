// A race's losing branches are cancelled: their unfinished entries are recorded "cancelled", durably,
// without consuming messages or waking the run, across restarts and replays.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForRun, waitForStatus } from "../../fixtures/wait.js";
import { diagnose } from "../../src/diagnosis/index.js";
import { type Engine, internals } from "../../src/engine/engine.js";
import { FakeClock, type HistoryEntry, setup, workflow } from "../../src/index.js";
import { closeLater, settleWrites, tempDb, untilWritten } from "../helpers.js";

const HOUR = 3_600_000;
const LOSERS = ["race[msg]/await-ping", "race[nap]/nap"];

function byPath(history: HistoryEntry[]): Record<string, HistoryEntry> {
  return Object.fromEntries(history.map((e) => [e.path, e]));
}

/** A condition on a run: its entry at `path` has `status`. */
function entryIs(run: { history(): Promise<HistoryEntry[]> }, path: string, status: string) {
  return async () => (await run.history()).find((e) => e.path === path)?.status === status;
}

function expectLosersCancelled(history: HistoryEntry[], paths = LOSERS): void {
  const entries = byPath(history);
  for (const p of paths) {
    expect(entries[p], p).toBeDefined();
    expect(entries[p]!.status, p).toBe("cancelled");
    expect(entries[p]!.endedAt, p).not.toBeNull();
  }
}

/** The repro: a fast step races a queue wait and a sleep; then the run waits on the same queue. */
const raceThenWait = workflow({
  queues: { ping: z.string() },
  run: async (ctx) => {
    const won = await ctx.race("race", {
      fast: (c) => c.step("fast", () => 1),
      msg: (c) => c.queue.next("await-ping", { queue: "ping" }),
      nap: async (c) => {
        await c.sleep("nap", 200);
      },
    });
    const later = await ctx.queue.next("later", { queue: "ping" });
    return { won, later };
  },
});

/** The repro exactly as reported: the race ends the run. */
const raceOnly = workflow({
  queues: { ping: z.string() },
  run: async (ctx) =>
    ctx.race("race", {
      fast: (c) => c.step("fast", () => 1),
      msg: (c) => c.queue.next("await-ping", { queue: "ping" }),
      nap: async (c) => {
        await c.sleep("nap", 200);
      },
    }),
});

describe("race losers", () => {
  it("records the losers' waits and sleeps as cancelled; a later message goes to a later wait; survives a restart", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    const first = await setup({ use: { raceThenWait } }).start({ database: db, clock });
    const run = await first.getOrCreate("raceThenWait", "k");
    await waitForStatus(first, run, ["waiting"]);

    const history = await run.history();
    const entries = byPath(history);
    expect(entries.race!.status).toBe("completed");
    expect(entries.race!.detail).toMatchObject({ winner: "fast" });
    expect(entries["race[fast]/fast"]!.status).toBe("completed");
    expectLosersCancelled(history);
    expect(entries.later!.status).toBe("waiting");

    // Only the later wait holds the run: the losing sleep does not wake it.
    const info = await run.info();
    expect(info.waiting).toEqual([{ kind: "queue", entry: "later", queue: "ping", until: null }]);
    expect(info.wakeAt).toBeNull();
    clock.advance(HOUR);
    await first.tick();
    expect(await run.status()).toBe("waiting");
    await first.close();

    // A restart on the same file does not resurrect the losers.
    const engine = closeLater(await setup({ use: { raceThenWait } }).start({ database: db, clock }));
    const again = await engine.getOrCreate("raceThenWait", "k");
    expectLosersCancelled(await again.history());

    await again.send("ping", "hello");
    expect(await again.result({ timeout: 5000 })).toEqual({
      won: { winner: "fast", value: 1 },
      later: "hello",
    });
    const after = await again.history();
    expectLosersCancelled(after);
    expect(byPath(after)["race[fast]/fast"]!.status).toBe("completed");
    expect(after.filter((e) => ["running", "waiting", "retrying"].includes(e.status))).toEqual([]);
    const msgs = await internals(engine).store.listMessages(again.id, { includeConsumed: true, limit: 10 });
    expect(msgs).toHaveLength(1);
    expect(msgs[0]!.consumedBy).toBe(byPath(after).later!.id);

    const d = await diagnose(engine as unknown as Engine, again.id);
    expect(d.category).toBe("healthy");
    expect(d.culprit?.path).toBe("later");
  });

  it("the reported repro: a completed run is healthy and blames no waiting loser", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    const first = await setup({ use: { raceOnly } }).start({ database: db, clock });
    const run = await first.getOrCreate("raceOnly", "k");
    expect(await run.result({ timeout: 5000 })).toEqual({ winner: "fast", value: 1 });
    expectLosersCancelled(await run.history());
    await first.close();

    const engine = closeLater(await setup({ use: { raceOnly } }).start({ database: db, clock }));
    const handle = await engine.getOrCreate("raceOnly", "k");
    const after = await handle.history();
    expectLosersCancelled(after);
    expect(after.filter((e) => e.status === "waiting")).toEqual([]);
    const d = await diagnose(engine as unknown as Engine, handle.id);
    expect(d.category).toBe("healthy");
    if (d.culprit && LOSERS.includes(d.culprit.path)) {
      expect(byPath(after)[d.culprit.path]!.status).toBe("cancelled");
    }
  });

  it("cancels the entry of a loser's step still running, with its attempt", async () => {
    let release: (() => void) | null = null;
    let ran = 0;
    const wf = workflow({
      queues: { ping: z.string() },
      run: async (ctx) =>
        ctx.race("race", {
          slow: (c) =>
            c.step("slow", async () => {
              ran++;
              await new Promise<void>((r) => (release = r));
              return "slow";
            }),
          msg: (c) => c.queue.next("await-ping", { queue: "ping" }),
        }),
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    // A start marker is written a turn or two after the step began, with no event of its own.
    await untilWritten(entryIs(run, "race[slow]/slow", "running"), "the slow step's start marker");
    await run.send("ping", "pong");
    expect(await run.result({ timeout: 5000 })).toEqual({ winner: "msg", value: "pong" });
    const slow = (await run.history()).find((e) => e.path === "race[slow]/slow")!;
    expect(slow.status).toBe("cancelled");
    expect(slow.endedAt).not.toBeNull();
    expect(slow.attempts).toMatchObject([{ n: 1, status: "cancelled" }]);
    // The function finishing later changes nothing: the run is over.
    (release as (() => void) | null)?.();
    await settleWrites(internals(engine));
    expect((await run.history()).find((e) => e.path === "race[slow]/slow")!.status).toBe("cancelled");
    expect(ran).toBe(1);
  });

  it("a restart in the middle of a race resumes it; the loser is cancelled when it is decided", async () => {
    const wf = workflow({
      queues: { ping: z.string() },
      run: async (ctx) => {
        const won = await ctx.race("race", {
          msg: (c) => c.queue.next("await-ping", { queue: "ping" }),
          nap: async (c) => {
            await c.sleep("nap", "1h");
            return "napped";
          },
        });
        const later = await ctx.queue.next("later", { queue: "ping" });
        return { won, later };
      },
    });
    const db = tempDb();
    const clock = new FakeClock();
    const first = await setup({ use: { wf } }).start({ database: db, clock });
    const s0 = await first.getOrCreate("wf", "slept");
    const p0 = await first.getOrCreate("wf", "pinged");
    await waitForStatus(first, s0, ["waiting"]);
    await waitForStatus(first, p0, ["waiting"]);
    expect((await s0.history()).map((e) => [e.path, e.status])).toEqual([
      ["race", "running"],
      ["race[msg]/await-ping", "waiting"],
      ["race[nap]/nap", "waiting"],
    ]);
    await first.close();

    const engine = closeLater(await setup({ use: { wf } }).start({ database: db, clock }));
    const slept = await engine.getOrCreate("wf", "slept");
    const pinged = await engine.getOrCreate("wf", "pinged");
    // "pinged": the message wins after the restart; the nap is cancelled and no longer wakes the run.
    await pinged.send("ping", "one");
    await waitForRun(engine, pinged, entryIs(pinged, "later", "waiting"), { what: "the later wait" });
    const p = byPath(await pinged.history());
    expect(p["race[msg]/await-ping"]!.status).toBe("completed");
    expect(p["race[nap]/nap"]!.status).toBe("cancelled");
    expect((await pinged.info()).wakeAt).toBeNull();

    // "slept": the nap wins after the restart; the queue wait is cancelled without taking a message.
    clock.advance(HOUR);
    await engine.tick();
    await waitForRun(engine, slept, entryIs(slept, "later", "waiting"), { what: "the later wait" });
    const s = byPath(await slept.history());
    expect(s["race[nap]/nap"]!.status).toBe("completed");
    expect(s["race[msg]/await-ping"]!.status).toBe("cancelled");

    await slept.send("ping", "two");
    await pinged.send("ping", "three");
    expect(await slept.result({ timeout: 5000 })).toEqual({
      won: { winner: "nap", value: "napped" },
      later: "two",
    });
    expect(await pinged.result({ timeout: 5000 })).toEqual({
      won: { winner: "msg", value: "one" },
      later: "three",
    });
  });

  it("replays from a step after the race and from inside a branch", async () => {
    const timeline: string[] = [];
    const wf = workflow({
      queues: { ping: z.string() },
      run: async (ctx) => {
        const won = await ctx.race("race", {
          fast: (c) => c.step("fast", () => timeline.push("fast")),
          msg: (c) => c.queue.next("await-ping", { queue: "ping" }),
          nap: async (c) => {
            await c.sleep("nap", 200);
          },
        });
        await ctx.step("after", () => timeline.push("after"));
        return won;
      },
    });
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    await run.result({ timeout: 5000 });
    expectLosersCancelled(await run.history());

    const plan = await engine.replay(run.id, { fromStep: "after" });
    expect(plan).toMatchObject({ applied: true, discard: [{ path: "after" }], reopen: [] });
    await waitForStatus(engine, run, ["completed"]);
    expectLosersCancelled(await run.history());
    expect(timeline).toEqual(["fast", "after", "after"]);

    // From inside a branch: the race is reopened and decided again (the recorded winner replays); the
    // kept cancelled wait takes part again and loses again, and the rerun sleep is cancelled too.
    const inside = await engine.replay(run.id, { fromStep: "race[nap]/nap" });
    expect(inside).toMatchObject({ applied: true, reopen: [{ path: "race" }] });
    await waitForStatus(engine, run, ["completed"]);
    const history = await run.history();
    expectLosersCancelled(history);
    const entries = byPath(history);
    expect(entries.race!.status).toBe("completed");
    expect(entries.race!.detail).toMatchObject({ winner: "fast" });
    expect(entries.after!.status).toBe("completed");
    expect(timeline).toEqual(["fast", "after", "after", "after"]);
  });

  it("a replay that reopens the race puts a cancelled loser back to waiting, and it can win", async () => {
    const wf = workflow({
      queues: { ping: z.string() },
      run: async (ctx) =>
        ctx.race("race", {
          msg: (c) => c.queue.next("await-ping", { queue: "ping" }),
          timer: async (c) => {
            await c.step("prepare", () => "ok");
            await c.sleep("nap", "1h");
            return "timed out";
          },
        }),
    });
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    await waitForStatus(engine, run, ["waiting"]);
    clock.advance(HOUR);
    expect(await run.result({ timeout: 5000 })).toEqual({ winner: "timer", value: "timed out" });
    expectLosersCancelled(await run.history(), ["race[msg]/await-ping"]);

    await engine.replay(run.id, { fromStep: "race[timer]/nap" });
    await waitForStatus(engine, run, ["waiting"]);
    const reopened = byPath(await run.history());
    expect(reopened.race!.status).toBe("running");
    expect(reopened["race[msg]/await-ping"]!.status).toBe("waiting");
    expect(reopened["race[msg]/await-ping"]!.endedAt).toBeNull();
    expect(reopened["race[timer]/nap"]!.status).toBe("waiting");

    await run.send("ping", "now");
    expect(await run.result({ timeout: 5000 })).toEqual({ winner: "msg", value: "now" });
    const final = byPath(await run.history());
    expect(final["race[msg]/await-ping"]!.status).toBe("completed");
    expect(final["race[timer]/prepare"]!.status).toBe("completed");
    expect(final["race[timer]/nap"]!.status).toBe("cancelled");
  });

  it("a join that fails cancels its other branches' unfinished entries", async () => {
    const wf = workflow({
      queues: { ping: z.string() },
      run: async (ctx) =>
        ctx.join("fan", {
          msg: (c) => c.queue.next("await-ping", { queue: "ping" }),
          boom: async (c) => {
            await c.sleep("pause", "1m");
            await c.step(
              "explode",
              () => {
                throw new Error("boom");
              },
              { retries: 0 },
            );
          },
        }),
    });
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    await waitForStatus(engine, run, ["waiting"]);
    clock.advance(60_000);
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(/boom|explode|fan/);
    const entries = byPath(await run.history());
    expect(entries.fan!.status).toBe("failed");
    expect(entries["fan[boom]/explode"]!.status).toBe("failed");
    expect(entries["fan[msg]/await-ping"]!.status).toBe("cancelled");
  });
});
