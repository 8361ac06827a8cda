// The deploy check in the engine: after registry.start() in the background, and a batch at a time.

import { afterEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { checkUnfinishedRuns } from "../../src/engine/drift-check.js";
import { type EngineEvent, FakeClock, setup, workflow } from "../../src/index.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { Store } from "../../src/storage/store.js";
import { closeLater, tempDb } from "../helpers.js";

/** The payout workflow as deployed, and as changed later with its first step renamed (same version). */
const payout = (first: string) =>
  workflow({
    queues: { approvals: z.object({ by: z.string() }) },
    run: async (ctx) => {
      await ctx.step(first, () => ({ iban: "DE00" }));
      const decision = await ctx.queue.next("await-approval", { queue: "approvals" });
      return ctx.step("pay", () => ({ paidBy: decision.by }));
    },
  });
const deployed = setup({ use: { payout: payout("load-account") } });
const changed = setup({ use: { payout: payout("load-customer") } });

/** A database with `n` payout runs waiting for their approval. */
async function waitingRuns(n: number, clock: FakeClock): Promise<string> {
  const db = tempDb();
  const engine = await deployed.start({ database: db, clock, deployCheck: false });
  const runs = [];
  for (let i = 0; i < n; i++) runs.push(await engine.getOrCreate("payout", `p-${i}`));
  for (const run of runs) await engine.watchRun(run.id, (r) => r.status === "waiting", { timeout: 10_000 });
  await engine.close();
  return db;
}

afterEach(() => vi.restoreAllMocks());

describe("the deploy check", () => {
  it("after start(), a waiting run whose code changed is a warning event and a stderr line; it is not refused", async () => {
    const clock = new FakeClock();
    const db = await waitingRuns(1, clock);
    const stderr = vi.spyOn(process.stderr, "write").mockImplementation(() => true);
    const engine = closeLater(await changed.start({ database: db, clock }));
    const warning = await new Promise<EngineEvent>((resolve) => {
      const off = engine.on((e) => {
        if (e.type === "warning") {
          off();
          resolve(e);
        }
      });
    });
    expect(warning).toMatchObject({
      type: "warning",
      code: "HISTORY_DRIFT",
      workflow: "payout",
      key: "p-0",
      details: {
        problem: "diverged",
        run: "payout/p-0",
        status: "waiting",
        entry: {
          scope: "",
          position: 1,
          path: "load-account",
          recorded: { kind: "step", name: "load-account" },
          requested: { kind: "step", name: "load-customer" },
        },
      },
    });
    expect((warning as { message: string }).message).toContain(
      'if "load-account" was renamed, restore its old name',
    );
    const lines = stderr.mock.calls.map((c) => String(c[0]));
    expect(
      lines.some((l) =>
        l.startsWith(
          'waymark: run "payout/p-0" (waiting) will fail when it runs again: Run "payout/p-0" no longer matches',
        ),
      ),
    ).toBe(true);
    expect((await engine.info((await engine.get("payout", "p-0")).id)).status).toBe("waiting");
  });

  it("reads the runs a batch at a time and checks each against the code of its own version", async () => {
    const clock = new FakeClock();
    const db = await waitingRuns(250, clock);
    const store = openSqliteStore(db, { readonly: true });
    const loads: number[] = [];
    const counting = new Proxy(store, {
      get(target, name, receiver) {
        if (name !== "loadRuns") return Reflect.get(target, name, receiver);
        return (ids: number[]) => {
          loads.push(ids.length);
          return target.loadRuns(ids);
        };
      },
    }) as Store;
    try {
      const broken = await checkUnfinishedRuns(counting, changed.definitions, { clock, batch: 100 });
      expect(broken).toMatchObject({ checked: 250, unfinished: [], aborted: false });
      expect(broken.findings).toHaveLength(250);
      expect(loads).toEqual([100, 100, 50]);
      const fine = await checkUnfinishedRuns(store, deployed.definitions, { clock });
      expect(fine).toMatchObject({ checked: 250, findings: [], unfinished: [], unregistered: [] });
      // Runs of a workflow the registry does not hold are counted, not checked.
      const other = setup({ use: { invoice: payout("load-account") } });
      expect(await checkUnfinishedRuns(store, other.definitions, { clock })).toMatchObject({
        checked: 0,
        findings: [],
        unregistered: [{ workflow: "payout", count: 250 }],
      });
      // A version this registry lacks is a finding too: the engine would refuse to start.
      const v2 = setup({ use: { payout: workflow({ ...payout("load-account"), version: 2 }) } });
      const missing = await checkUnfinishedRuns(store, v2.definitions, { clock, batch: 500 });
      expect(missing.findings[0]).toMatchObject({ problem: "version-missing", entry: null });
      expect(missing.findings[0]!.message).toContain("keep version 1 registered beside the new one");
    } finally {
      await store.close();
    }
  });
});
