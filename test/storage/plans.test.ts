// Store conformance, bulk plans: a plan pins its runs in order, each run's outcome is written once (a second
// writer of it changes nothing), and progress counts them. Every test runs against SQLite and PostgreSQL.

import { describe, expect, it } from "vitest";
import { BACKENDS } from "./backends.js";
import { T0 } from "./fixtures.js";

const plan = (token: string, total: number) => ({
  token,
  action: "replay" as const,
  spec: JSON.stringify({ action: "replay", selector: { signature: "abc" } }),
  createdAt: T0,
  expiresAt: T0 + 900_000,
  total,
});

describe.each(BACKENDS)("$name store: bulk plans", (backend) => {
  it("stores a plan with its runs in order and pages through the pending ones", async () => {
    const store = await (await backend.fresh()).open();
    await store.createPlan(plan("p1", 5), [50, 10, 40, 20, 30]);
    await store.createPlan(plan("p2", 1), [10]);
    expect(await store.getPlan("p1")).toEqual(plan("p1", 5));
    expect(await store.getPlan("nope")).toBeUndefined();
    const first = await store.planRuns("p1", { after: 0, limit: 2, pendingOnly: true });
    expect(first.map((r) => [r.position, r.runId])).toEqual([
      [1, 50],
      [2, 10],
    ]);
    const rest = await store.planRuns("p1", { after: 2, limit: 10, pendingOnly: true });
    expect(rest.map((r) => r.runId)).toEqual([40, 20, 30]);
    expect(await store.planProgress("p1")).toEqual([{ outcome: null, count: 5 }]);
  });

  it("writes each outcome once: a second writer of the same run records nothing", async () => {
    const store = await (await backend.fresh()).open();
    const other = await (await backend.fresh()).open();
    await store.createPlan(plan("p", 3), [1, 2, 3]);
    await other.createPlan(plan("p", 1), [1]); // another database: untouched by this one's writes
    const now = T0 + 10;
    expect(
      await store.recordPlanOutcomes(
        "p",
        [
          { runId: 1, outcome: "replayed", reason: null },
          { runId: 2, outcome: "refused", reason: "it is running" },
        ],
        now,
      ),
    ).toEqual([1, 2]);
    expect(
      (
        await store.recordPlanOutcomes(
          "p",
          [
            { runId: 2, outcome: "replayed", reason: null },
            { runId: 3, outcome: "skipped", reason: "gone" },
          ],
          now + 1,
        )
      ).sort(),
    ).toEqual([3]);
    const all = await store.planRuns("p", { after: 0, limit: 10, pendingOnly: false });
    expect(all).toEqual([
      { position: 1, runId: 1, outcome: "replayed", reason: null, doneAt: now },
      { position: 2, runId: 2, outcome: "refused", reason: "it is running", doneAt: now },
      { position: 3, runId: 3, outcome: "skipped", reason: "gone", doneAt: now + 1 },
    ]);
    expect(await store.planRuns("p", { after: 0, limit: 10, pendingOnly: true })).toEqual([]);
    const progress = (await store.planProgress("p")).sort((a, b) => a.outcome!.localeCompare(b.outcome!));
    expect(progress).toEqual([
      { outcome: "refused", count: 1 },
      { outcome: "replayed", count: 1 },
      { outcome: "skipped", count: 1 },
    ]);
    expect(await other.planProgress("p")).toEqual([{ outcome: null, count: 1 }]);
  });

  it("keeps plans across a reopen (another process carries one on)", async () => {
    const fresh = await backend.fresh();
    const a = await fresh.open();
    await a.createPlan(plan("p", 2), [7, 8]);
    await a.recordPlanOutcomes("p", [{ runId: 7, outcome: "cancelled", reason: null }], T0 + 1);
    await a.close();
    const b = await fresh.open();
    expect((await b.planRuns("p", { after: 0, limit: 10, pendingOnly: true })).map((r) => r.runId)).toEqual([
      8,
    ]);
  });
});
