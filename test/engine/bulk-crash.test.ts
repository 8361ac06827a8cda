// A bulk plan whose call stopped between acting on runs and recording their outcomes (the server SIGKILLed
// mid-batch): the next call recognises the runs this plan already replayed or cancelled (their replay
// marker / cancel reason names the plan) and counts them done, not refused as changed since the plan.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";
import { broken, fixed } from "./bulk-invoices.js";

const BACKENDS = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

/** Makes the engine's next outcome write fail, as if the process died right after acting on its batch. */
function dropNextOutcomeWrite(store: { recordPlanOutcomes: (...args: any[]) => Promise<number[]> }) {
  const real = store.recordPlanOutcomes.bind(store);
  store.recordPlanOutcomes = async () => {
    store.recordPlanOutcomes = real;
    throw new Error("killed before the outcomes were written");
  };
}

describe.each(BACKENDS)("a bulk plan interrupted between acting and recording on $name", (backend) => {
  it("replay: the second call counts the runs the first call replayed", async () => {
    const database = await backend.database();
    const clock = new FakeClock();
    const before = await broken.start({ database, clock });
    const runs = [];
    for (let n = 1; n <= 30; n++)
      runs.push(await before.getOrCreate("invoice", `inv-${n}`, { n, kind: "tax" }));
    for (const r of runs) await expect(r.result()).rejects.toThrow(/Tax API/);
    const preview = await before.bulk.preview({ action: "replay", selector: { workflow: "invoice" } });
    expect(preview).toMatchObject({ matched: 30, eligible: 30 });
    await before.close();

    clock.advance(1000);
    const first = await fixed.start({ database, clock });
    dropNextOutcomeWrite(internals(first).store);
    await expect(first.bulk.apply(preview.token, { batchSize: 10, by: "test" })).rejects.toThrow(/killed/);
    // The plan is newest first: the first batch was inv-30..inv-21.
    for (let i = 21; i <= 30; i++)
      expect(await (await first.get("invoice", `inv-${i}`)).result()).toBe("paid");
    await first.close();

    clock.advance(1000);
    const second = closeLater(await fixed.start({ database, clock }));
    const rest = await second.bulk.apply(preview.token, { batchSize: 10, by: "test" });
    expect(rest).toMatchObject({
      counts: { done: 30, requested: 0, refused: 0, skipped: 0 },
      progress: { done: 30, refused: 0, pending: 0 },
      finished: true,
    });
    expect(rest.refusals).toEqual([]);
    const one = await second.history((await second.findRun("invoice", "inv-30"))!.id);
    expect(one.filter((e) => e.kind === "replay")).toHaveLength(1);
  });

  it("cancel: the second call counts the runs the first call cancelled", async () => {
    const database = await backend.database();
    const clock = new FakeClock();
    const waiter = workflow({
      queues: { go: z.object({}) },
      run: async (ctx) => {
        await ctx.queue.next("wait-go", { queue: "go" });
        return "went";
      },
    });
    const engine = closeLater(await setup({ use: { waiter } }).start({ database, clock }));
    for (const key of ["a", "b", "c", "d"]) await engine.getOrCreate("waiter", key);
    const preview = await engine.bulk.preview({ action: "cancel", selector: { workflow: "waiter" } });
    expect(preview.eligible).toBe(4);
    clock.advance(1000);
    dropNextOutcomeWrite(internals(engine).store);
    await expect(engine.bulk.apply(preview.token, { batchSize: 2, by: "test" })).rejects.toThrow(/killed/);
    const rest = await engine.bulk.apply(preview.token, { by: "test" });
    expect(rest).toMatchObject({
      counts: { done: 4, refused: 0, skipped: 0 },
      progress: { done: 4, pending: 0 },
    });
  });
});
