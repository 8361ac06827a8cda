// start({ on }) listens from before the engine starts: a run that start() itself resumes and that ends at once
// (a history the new code no longer matches) is seen, which a listener added once start() returned can miss.

import { afterEach, describe, expect, it, vi } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { attach, type EngineEvent, FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";

/** Steps `first`, sleeps a minute, steps "b". */
const napper = (first: string) =>
  workflow({
    run: async (ctx) => {
      await ctx.step(first, () => 1);
      await ctx.sleep("nap", 60_000);
      await ctx.step("b", () => 2);
    },
  });

/** Two runs asleep in a closed database; the clock then moves past their wake-up. */
async function twoSleeping(clock: FakeClock): Promise<string> {
  const db = tempDb();
  const first = await setup({ use: { w: napper("a") } }).start({ database: db, clock, deployCheck: false });
  for (const key of ["r0", "r1"]) await waitForStatus(first, await first.getOrCreate("w", key), ["sleeping"]);
  await first.close();
  clock.advance(120_000);
  return db;
}

const runEvents = (events: EngineEvent[]) =>
  events.flatMap((e) => (e.type === "run" ? [`${e.key} ${e.status}`] : [])).toSorted();

afterEach(() => vi.restoreAllMocks());

describe("registry.start({ on })", () => {
  it("sees the events of runs resumed and ended during start()", async () => {
    const clock = new FakeClock();
    const db = await twoSleeping(clock);
    const events: EngineEvent[] = [];
    const engine = closeLater(
      await setup({ use: { w: napper("a2") } }).start({
        database: db,
        clock,
        deployCheck: false,
        on: (e) => events.push(e),
      }),
    );
    for (const key of ["r0", "r1"]) await waitForStatus(engine, await engine.get("w", key), ["failed"]);
    expect(runEvents(events)).toEqual(["r0 failed", "r0 running", "r1 failed", "r1 running"]);
  });

  it("keeps listening after start, like engine.on", async () => {
    const events: EngineEvent[] = [];
    const engine = closeLater(
      await setup({ use: { w: napper("a") } }).start({ database: tempDb(), on: (e) => events.push(e) }),
    );
    await waitForStatus(engine, await engine.getOrCreate("w", "k"), ["sleeping"]);
    expect(runEvents(events)).toContain("k sleeping");
    expect(events.some((e) => e.type === "entry")).toBe(true);
  });

  it("an async listener that rejects is logged, like one that throws, and the engine goes on", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const heard: string[] = [];
    const engine = closeLater(
      await setup({ use: { w: napper("a") } }).start({
        database: tempDb(),
        on: async (e) => {
          if (e.type === "run") heard.push(e.status);
          throw new Error("async listener boom");
        },
      }),
    );
    await waitForStatus(engine, await engine.getOrCreate("w", "k"), ["sleeping"]);
    await expect
      .poll(() =>
        stderr.mock.calls.some((c) => String(c[0]).includes("an event listener threw: async listener boom")),
      )
      .toBe(true);
    expect(heard).toContain("sleeping");
  });

  it("a listener that throws or rejects with a value that cannot be shown as text is logged too", async () => {
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const engine = closeLater(
      await setup({ use: { w: napper("a") } }).start({
        database: tempDb(),
        on: (e) => {
          if (e.type === "entry") throw Object.create(null);
          if (e.type === "run") return Promise.reject(Object.create(null)) as never;
        },
      }),
    );
    const run = await engine.getOrCreate("w", "k");
    await waitForStatus(engine, run, ["sleeping"]);
    await expect
      .poll(() => stderr.mock.calls.filter((c) => String(c[0]).includes("cannot be shown as text")).length)
      .toBeGreaterThanOrEqual(2);
    expect((await engine.info(run.id)).status).toBe("sleeping");
  });

  it("is refused unless it is a function, by start() and attach()", async () => {
    const registry = setup({ use: { w: napper("a") } });
    for (const open of [
      () => registry.start({ database: ":memory:", on: "log" as never }),
      () => attach({ database: ":memory:", on: 1 as never }),
    ]) {
      await expect(open()).rejects.toThrow(/option on takes a function called with every engine event/);
    }
  });

  it("attach({ on }) hears other processes' changes", async () => {
    const db = tempDb();
    const owner = closeLater(await setup({ use: { w: napper("a") } }).start({ database: db }));
    const events: EngineEvent[] = [];
    closeLater(await attach({ database: db, pollMs: 5, on: (e) => events.push(e) }));
    await waitForStatus(owner, await owner.getOrCreate("w", "k"), ["sleeping"]);
    await expect.poll(() => events.some((e) => e.type === "external")).toBe(true);
  });
});
