import { describe, expect, it } from "vitest";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb, until } from "../helpers.js";

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
    const handles = await Promise.all(
      Array.from({ length: N }, (_, i) => first.getOrCreate("napper", `n${i}`, { i })),
    );
    await until(
      async () =>
        (await first.listRuns({ status: "sleeping", limit: 1000 })).runs.length === 1000 &&
        first.active.size === 0,
      "all runs to sleep",
      60_000,
    );
    const counts = await first.listWorkflows();
    expect(counts[0]!.runs).toEqual({ sleeping: N });
    await first.close();

    const second = closeLater(await registry.start({ database: db, clock }));
    clock.advance(60 * 60_000 - 1);
    await second.tick();
    expect(woke).toBe(0);
    clock.advance(1);
    await until(
      async () => (await second.listWorkflows())[0]!.runs.completed === N,
      "all runs to complete",
      60_000,
    );
    expect(woke).toBe(N);
    expect(await second.get("napper", "n4242").then((h) => h.result())).toBe(4242);
    expect(handles).toHaveLength(N);
  }, 120_000);
});
