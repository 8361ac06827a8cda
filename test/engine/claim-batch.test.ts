import { describe, expect, it } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { attach, FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, runsReached, tempDb } from "../helpers.js";

describe("claiming many due runs at once (a restart)", () => {
  it("reads their requests once per chunk and commits once per chunk, not once per run; a request still applies", async () => {
    const db = tempDb();
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const napper = workflow({
      run: async (ctx, input: { i: number }) => {
        await ctx.step("before", () => input.i);
        await ctx.sleep("nap", "1h");
        await ctx.step("after", () => input.i);
        return input.i;
      },
    });
    const registry = setup({ use: { napper } });
    const N = 250;
    const first = await registry.start({ database: db, clock });
    const asleep = runsReached(first, "sleeping", N);
    const ids: number[] = [];
    for (let i = 0; i < N; i++) ids.push((await first.getOrCreate("napper", `n${i}`, { i })).id);
    await asleep;
    await first.close();
    // A cancel with rollback is always a request, carried out by the process that claims the run.
    const reader = closeLater(await attach({ database: db, clock }));
    expect(await reader.cancel(ids[7]!, { rollback: true })).toBe("requested");

    const second = closeLater(await registry.start({ database: db, clock, maxActiveRuns: N }));
    const e = internals(second);
    await waitForStatus(second, await second.get("napper", "n7"), ["cancelled"]);

    const reads: number[] = [];
    const store = e.store as unknown as {
      pendingRequests: (ids: number[] | null, n: number) => Promise<unknown>;
    };
    const read = store.pendingRequests.bind(store);
    store.pendingRequests = (ids, n) => {
      if (ids) reads.push(ids.length);
      return read(ids, n);
    };
    const commitsBefore = e.writes.commits;
    const done = runsReached(second, "completed", N - 1);
    clock.advance(60 * 60_000);
    await done;
    // Three chunks (100, 100, 49): before, one read and one flush per run, and so one commit per run.
    expect(reads).toEqual([100, 100, 49]);
    expect(e.writes.commits - commitsBefore).toBeLessThan(20);
    expect((await second.listWorkflows())[0]!.runs).toEqual({ completed: N - 1, cancelled: 1 });
  }, 60_000);
});
