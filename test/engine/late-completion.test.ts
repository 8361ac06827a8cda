// A step whose function ignores step.signal and finishes after its run (or its branch) stopped changes
// nothing: not the state, not the entry's record, not what runs next. One test per way a run stops under
// a running step: cancel, a lost race, a replay of the cancelled run, an eviction after a failed commit,
// a lease taken over by another process, and the engine closing.

import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, type HistoryEntry, setup, workflow } from "../../src/index.js";
import { closeLater, settleWrites, tempDb, untilWritten } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

/** Slow work that ignores step.signal: it finishes only when the test opens the gate. */
function gate() {
  let open!: () => void;
  const wait = new Promise<void>((r) => {
    open = r;
  });
  return { wait, open };
}

function entryAt(history: HistoryEntry[], path: string): HistoryEntry {
  const e = history.find((x) => x.path === path);
  expect(e, path).toBeDefined();
  return e!;
}

/** Waits for an entry's start marker or wait record (written in the background, with no event). */
function untilEntry(run: { history(): Promise<HistoryEntry[]> }, path: string, status: string) {
  return untilWritten(
    async () => (await run.history()).find((e) => e.path === path)?.status === status,
    `entry ${path} to be ${status}`,
  );
}

const DATABASES = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

describe.each(DATABASES)("a late completion on $name", ({ database }) => {
  it("after a cancel changes nothing: state, output and what follows; its attempt reads cancelled", async () => {
    const g = gate();
    let after = 0;
    const wf = workflow({
      state: { k: 0 },
      run: async (ctx) => {
        await ctx.step("slow", async (s) => {
          await g.wait;
          s.state.k = 1;
          return "late";
        });
        await ctx.step("after", () => after++);
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: await database() }));
    const run = await engine.getOrCreate("wf", "k");
    await untilEntry(run, "slow", "running");
    expect(await run.cancel()).toBe("cancelled");
    g.open();
    await settleWrites(internals(engine));

    const info = await run.info();
    expect(info.status).toBe("cancelled");
    expect(info.state).toEqual({ k: 0 });
    const slow = entryAt(await run.history(), "slow");
    expect(slow.status).toBe("cancelled");
    expect(slow.output).toBeUndefined();
    expect(slow.stateChange).toBeUndefined();
    expect(slow.attempts).toMatchObject([{ n: 1, status: "cancelled" }]);
    // As stored, not only as shown: the attempt the cancel stopped is recorded cancelled.
    const [stored] = await internals(engine).store.loadRuns([run.id]);
    expect(JSON.parse(stored!.entries[0]!.attempts!)).toMatchObject([{ n: 1, status: "cancelled" }]);
    expect(stored!.run.state).toBe('{"k":0}');
    expect(after).toBe(0);
  });

  it("after a cancel that came before the step's start marker was written: its attempt still reads cancelled", async () => {
    for (const retried of [false, true]) {
      const g = gate();
      let started!: () => void;
      const running = new Promise<void>((r) => {
        started = r;
      });
      let calls = 0;
      const wf = workflow({
        run: async (ctx) => {
          await ctx.step(
            "slow",
            async () => {
              if (++calls === 1 && retried) throw new Error("first attempt fails");
              started();
              await g.wait;
            },
            { retries: 1, backoff: 0 },
          );
        },
      });
      const engine = closeLater(await setup({ use: { wf } }).start({ database: await database() }));
      const run = await engine.getOrCreate("wf", `k-${retried}`);
      await running; // the attempt began this turn: its marker is not written yet
      expect(await run.cancel()).toBe("cancelled");
      g.open();
      await settleWrites(internals(engine));
      const slow = entryAt(await run.history(), "slow");
      expect(slow.status).toBe("cancelled");
      const last = retried ? 2 : 1;
      expect(slow.attempts, `retried: ${retried}`).toHaveLength(last);
      expect(slow.attempts!.at(-1)).toMatchObject({ n: last, status: "cancelled" });
      await engine.close();
    }
  });

  it("after another process took the lease over changes nothing, even once this process's heartbeat ran", async () => {
    const url = await database();
    // Two machines whose clocks agree; A froze (its step hung) past its lease, then woke.
    const clockA = new FakeClock();
    const clockB = new FakeClock(clockA.now());
    const LEASE = 60_000;
    const g = gate();
    const calls: string[] = [];
    const def = (tag: string) =>
      workflow({
        state: { by: "" },
        run: async (ctx) => {
          await ctx.step("work", async (s) => {
            calls.push(tag);
            if (tag === "a") await g.wait;
            s.state.by = tag;
            return tag;
          });
          await ctx.step("after", () => calls.push(`after@${tag}`));
        },
      });
    const options = { database: url, leaseMs: LEASE };
    const a = closeLater(
      await setup({ use: { job: def("a") } }).start({ ...options, clock: clockA, ownerId: "machine-a:1:a" }),
    );
    const b = closeLater(
      await setup({ use: { job: def("b") } }).start({ ...options, clock: clockB, ownerId: "machine-b:1:b" }),
    );
    const run = await a.getOrCreate("job", "j");
    await untilEntry(run, "work", "running"); // A's step started, and everything A queued is written
    clockB.advance(LEASE);
    await b.tick();
    await b.result(run.id, { timeout: 10_000 });
    clockA.advance(LEASE);
    await internals(a).renew(); // A's heartbeat: the lease is no longer A's
    g.open();
    await settleWrites(internals(a));

    expect(calls).toEqual(["a", "b", "after@b"]);
    expect((await b.info(run.id)).state).toEqual({ by: "b" });
    const history = await b.history(run.id);
    expect(history.map((e) => [e.path, e.status, e.output])).toEqual([
      ["work", "completed", "b"],
      ["after", "completed", 3],
    ]);
    expect(internals(a).active.size).toBe(0);
  });
});

describe("a late completion (SQLite)", () => {
  it("of a race's loser while the run goes on changes nothing; the loser stays cancelled", async () => {
    const loser = gate();
    const next = gate();
    const wf = workflow({
      state: { loser: 0, after: 0 },
      run: async (ctx) => {
        const won = await ctx.race("race", {
          fast: (c) => c.step("fast", () => "fast"),
          slow: (c) =>
            c.step("slow", async (s) => {
              await loser.wait;
              s.state.loser = 1;
              return "slow";
            }),
        });
        await ctx.step("next", async (s) => {
          await next.wait;
          s.state.after = s.state.loser + 10;
        });
        return won;
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    await untilEntry(run, "next", "running");
    loser.open();
    await settleWrites(internals(engine));
    expect((await run.info()).state).toEqual({ loser: 0, after: 0 });
    next.open();
    expect(await run.result({ timeout: 5000 })).toEqual({ winner: "fast", value: "fast" });

    expect((await run.info()).state).toEqual({ loser: 0, after: 10 });
    const slow = entryAt(await run.history(), "race[slow]/slow");
    expect(slow.status).toBe("cancelled");
    expect(slow.output).toBeUndefined();
    expect(slow.stateChange).toBeUndefined();
  });

  it("of the cancelled execution after a replay changes nothing in the replayed run", async () => {
    const old = gate();
    let calls = 0;
    const wf = workflow({
      state: { by: "" },
      run: async (ctx) => {
        return ctx.step("slow", async (s) => {
          const n = ++calls;
          if (n === 1) await old.wait;
          s.state.by = n === 1 ? "cancelled execution" : "replay";
          return n;
        });
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    await untilEntry(run, "slow", "running");
    expect(await run.cancel()).toBe("cancelled");
    await engine.replay(run.id);
    expect(await run.result({ timeout: 5000 })).toBe(2);
    old.open();
    await settleWrites(internals(engine));

    expect((await run.info()).state).toEqual({ by: "replay" });
    const slow = entryAt(await run.history(), "slow");
    expect([slow.status, slow.output]).toEqual(["completed", 2]);
  });

  it("of an execution stopped by a failed commit changes nothing in the execution that reloaded the run", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    const stopped = gate();
    const reloaded = gate();
    let calls = 0;
    const wf = workflow({
      state: { slow: "", quick: 0 },
      run: async (ctx) => {
        await ctx.join("both", {
          slow: (c) =>
            c.step("slow", async (s) => {
              const n = ++calls;
              await (n === 1 ? stopped : reloaded).wait;
              s.state.slow = n === 1 ? "stopped execution" : "reloaded";
              return n;
            }),
          quick: async (c) => {
            await c.sleep("nap", "1m");
            await c.step("quick", (s) => {
              s.state.quick++;
            });
          },
        });
        return ctx.state;
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: db, clock, busyTimeoutMs: 20 }));
    const errors: string[] = [];
    engine.on((e) => {
      if (e.type === "storage-error") errors.push(e.code);
    });
    const busy = new Promise<void>((resolve) => {
      engine.on((e) => {
        // The run's own commit failing (a scheduler pass failing first names no run).
        if (e.type === "storage-error" && e.code === "STORAGE_BUSY" && e.runIds.length > 0) resolve();
      });
    });
    const run = await engine.getOrCreate("wf", "k");
    await untilEntry(run, "both[slow]/slow", "running");
    await untilEntry(run, "both[quick]/nap", "waiting");

    // Another connection holds the write lock: the nap's completion cannot commit, the execution stops.
    const lock = new Database(db);
    lock.exec("BEGIN IMMEDIATE");
    clock.advance(60_000);
    await engine.tick();
    await busy; // the commit failed
    expect(errors).toContain("STORAGE_BUSY");
    expect(internals(engine).active.size).toBe(0);
    lock.exec("ROLLBACK");
    lock.close();

    // A second later the run is loaded again: its quick branch finishes, its slow step runs again.
    clock.advance(1000);
    await engine.tick();
    await untilEntry(run, "both[quick]/quick", "completed");
    expect(calls).toBe(2);
    // Now the stopped execution's step returns: nothing of it may land.
    stopped.open();
    await settleWrites(internals(engine));
    expect((await run.info()).state).toEqual({ slow: "", quick: 1 });
    expect(entryAt(await run.history(), "both[slow]/slow").status).toBe("running");

    reloaded.open();
    expect(await run.result({ timeout: 5000 })).toEqual({ slow: "reloaded", quick: 1 });
    const slow = entryAt(await run.history(), "both[slow]/slow");
    expect([slow.status, slow.output]).toEqual(["completed", 2]);
  });

  it("while the engine closes writes nothing; the step runs again on the next start", async () => {
    const db = tempDb();
    const g = gate();
    let calls = 0;
    const wf = workflow({
      state: { k: 0 },
      run: async (ctx) => {
        return ctx.step("slow", async (s) => {
          const n = ++calls;
          if (n === 1) await g.wait;
          s.state.k = n;
          return n;
        });
      },
    });
    const first = await setup({ use: { wf } }).start({ database: db });
    const run = await first.getOrCreate("wf", "k");
    await untilEntry(run, "slow", "running");
    const closing = first.close();
    g.open(); // the function returns while close() is still handing the run back
    await closing;

    const file = new Database(db, { readonly: true });
    const stored = file.prepare("SELECT state, status FROM runs").get();
    const entry = file.prepare("SELECT status, output FROM entries").get();
    file.close();
    expect(stored).toEqual({ state: '{"k":0}', status: "running" });
    expect(entry).toEqual({ status: "running", output: null });

    const second = closeLater(await setup({ use: { wf } }).start({ database: db }));
    const again = await second.getOrCreate("wf", "k");
    expect(await again.result({ timeout: 5000 })).toBe(2);
    expect((await again.info()).state).toEqual({ k: 2 });
    expect(entryAt(await again.history(), "slow").attempts).toMatchObject([
      { n: 1, status: "interrupted" },
      { n: 2, status: "completed" },
    ]);
  });
});
