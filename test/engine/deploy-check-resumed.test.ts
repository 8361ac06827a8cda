// The deploy check after start() leaves alone the runs this process resumed: their executions replay the same
// history against the same code, and a divergence there fails the run as it did before.

import { afterEach, describe, expect, it, vi } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { checkUnfinishedRuns } from "../../src/engine/drift-check.js";
import { internals } from "../../src/engine/engine.js";
import { type EngineEvent, FakeClock, setup, workflow } from "../../src/index.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { closeLater, tempDb } from "../helpers.js";

/** Each call of a run's workflow function, by run: an execution's replay and a check's replay both call it. */
const calls: string[] = [];

/** Sleeps `nap` ms after its first step, then 30 days after "b"; `first` names its first step. */
const napper = (first: string) =>
  workflow({
    run: async (ctx, input: { name: string; nap: number }) => {
      calls.push(input.name);
      await ctx.step(first, () => 1);
      await ctx.sleep("nap", input.nap);
      await ctx.step("b", () => 2);
      await ctx.sleep("long", "30d");
    },
  });

/** r0 and r1 sleep a minute, r2 a day; the process stops and the clock moves two minutes on. */
async function threeSleeping(clock: FakeClock): Promise<string> {
  const db = tempDb();
  const first = await setup({ use: { w: napper("a") } }).start({ database: db, clock, deployCheck: false });
  const runs = [];
  for (const [name, nap] of [
    ["r0", 60_000],
    ["r1", 60_000],
    ["r2", 86_400_000],
  ] as const)
    runs.push(await first.getOrCreate("w", name, { name, nap }));
  for (const run of runs) await waitForStatus(first, run, ["sleeping"]);
  await first.close();
  clock.advance(120_000);
  calls.length = 0;
  return db;
}

afterEach(() => vi.restoreAllMocks());

describe("the deploy check after start()", () => {
  it("does not replay again the runs resumed at start; a sleeping run is still checked", async () => {
    const clock = new FakeClock();
    const db = await threeSleeping(clock);
    const engine = internals(
      closeLater(await setup({ use: { w: napper("a") } }).start({ database: db, clock })),
    );
    const report = await engine.deployCheck;
    expect(report).toMatchObject({ checked: 1, resumed: 2, findings: [], unfinished: [], aborted: false });
    // r0 and r1 replayed once, by their executions; r2 once, by the check (before: r0 and r1 twice).
    expect(calls.toSorted()).toEqual(["r0", "r1", "r2"]);
    for (const key of ["r0", "r1"]) await waitForStatus(engine, await engine.get("w", key), ["sleeping"]);
    // The check is over: the engine no longer notes the runs it resumes.
    expect(engine.resumedHere).toBeNull();
  });

  it("a resumed run that diverges fails with HISTORY_DIVERGED and is no warning; a sleeping one is warned", async () => {
    const clock = new FakeClock();
    const db = await threeSleeping(clock);
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const changed = setup({ use: { w: napper("a2") } });
    const engine = internals(closeLater(await changed.start({ database: db, clock })));
    const warnings: EngineEvent[] = [];
    engine.on((e) => {
      if (e.type === "warning") warnings.push(e);
    });
    // r0 and r1 may have failed before the check lists unfinished runs (then they are not counted at all).
    const report = await engine.deployCheck;
    expect(report).toMatchObject({ checked: 1 });
    expect(report!.findings.map((f) => f.run)).toEqual(["w/r2"]);
    expect(warnings.map((w) => (w as { key: string }).key)).toEqual(["r2"]);
    const lines = stderr.mock.calls.map((c) => String(c[0])).filter((l) => l.includes("will fail"));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('run "w/r2" (sleeping) will fail when it runs again');
    for (const key of ["r0", "r1"]) {
      const info = await engine.info((await engine.get("w", key)).id);
      expect(info.status).toBe("failed");
      expect(info.error).toMatchObject({ code: "HISTORY_DIVERGED" });
    }
    expect(calls.toSorted()).toEqual(["r0", "r1", "r2"]);
  });

  it("a run another process holds is still checked, and warned about when it diverges", async () => {
    const clock = new FakeClock();
    const db = tempDb();
    let release = () => {};
    const hanging = new Promise<void>((r) => {
      release = r;
    });
    let entered = () => {};
    // Entered once "a" is committed (a step returns only after its record is).
    const inHang = new Promise<void>((r) => {
      entered = r;
    });
    const holder = (first: string) =>
      workflow({
        run: async (ctx) => {
          await ctx.step(first, () => 1);
          await ctx.step("hang", () => {
            entered();
            return hanging;
          });
        },
      });
    const other = await setup({ use: { h: holder("a") } }).start({ database: db, clock, deployCheck: false });
    try {
      await other.getOrCreate("h", "held");
      await inHang;
      const engine = internals(
        closeLater(await setup({ use: { h: holder("a2") } }).start({ database: db, clock })),
      );
      const report = await engine.deployCheck;
      expect(report).toMatchObject({ checked: 1, resumed: 0 });
      expect(report!.findings).toMatchObject([{ run: "h/held", status: "running", problem: "diverged" }]);
    } finally {
      release();
      await other.close();
    }
  });

  it("checkUnfinishedRuns skips the runs it is told were resumed, counts them, and checks the rest", async () => {
    const clock = new FakeClock();
    const db = await threeSleeping(clock);
    const store = openSqliteStore(db, { readonly: true });
    try {
      const ids = new Map((await store.listRuns({ workflow: "w", limit: 10 })).map((r) => [r.key, r.id]));
      const changed = setup({ use: { w: napper("a2") } });
      const report = await checkUnfinishedRuns(store, changed.definitions, {
        clock,
        resumed: new Set([ids.get("r1")!]),
      });
      expect(report).toMatchObject({ checked: 2, resumed: 1 });
      expect(report.findings.map((f) => f.run).toSorted()).toEqual(["w/r0", "w/r2"]);
      expect(calls.toSorted()).toEqual(["r0", "r2"]);
    } finally {
      await store.close();
    }
  });
});
