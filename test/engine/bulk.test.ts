// Bulk replay and cancel on the engine (SQLite and PostgreSQL): a dry run pins exactly the runs it selected,
// a real call acts on them only, in batches, and a second call carries an interrupted plan on and does
// nothing more once it is finished; plans expire on the injected clock.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";
import { broken, fixed } from "./bulk-invoices.js";

const BACKENDS = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

/** 30 invoices failing at "tax" and 5 at "mail", on version 1; the signature of each kind. */
async function failedInvoices(database: string, clock: FakeClock) {
  const engine = await broken.start({ database, clock });
  const runs = [];
  for (let n = 1; n <= 35; n++)
    runs.push(await engine.getOrCreate("invoice", `inv-${n}`, { n, kind: n <= 30 ? "tax" : "mail" }));
  for (const r of runs) await expect(r.result()).rejects.toThrow(n(r.key) <= 30 ? /Tax API/ : /SMTP/);
  const sig = async (key: string) => (await engine.findRun("invoice", key))!.failureSignature!;
  const tax = await sig("inv-1");
  const mail = await sig("inv-31");
  return { engine, tax, mail };
}
const n = (key: string) => Number(key.split("-")[1]);

describe.each(BACKENDS)("bulk actions on $name", (backend) => {
  it("replays exactly the runs a dry run pinned by signature, once, after the fix", async () => {
    const database = await backend.database();
    const clock = new FakeClock();
    const { engine: before, tax, mail } = await failedInvoices(database, clock);
    expect(tax).not.toBe(mail);

    const preview = await before.bulk.preview({ action: "replay", selector: { signature: tax } });
    expect(preview).toMatchObject({ action: "replay", matched: 30, eligible: 30, refusedCount: 0 });
    expect(preview.bySignature).toEqual([
      {
        signature: tax,
        workflow: "invoice",
        pattern: "Tax API answered <n> for invoice <n>",
        count: 30,
        eligible: 30,
      },
    ]);
    expect(preview.samples).toHaveLength(10);
    expect(preview.samples[0]!.replay).toMatchObject({ from: "tax", rerun: ["tax"], discardCount: 1 });
    // A run failing the same way after the dry run is not in its plan.
    const late = await before.getOrCreate("invoice", "late", { n: 99, kind: "tax" });
    await expect(late.result()).rejects.toThrow(/Tax API/);
    expect((await before.findRun("invoice", "late"))!.failureSignature).toBe(tax);
    await before.close();

    // The fix lands: version 2 in the registry.
    const after = closeLater(await fixed.start({ database, clock }));
    const seen: number[] = [];
    const result = await after.bulk.apply(preview.token, {
      batchSize: 7,
      by: "test",
      onProgress: (p) => {
        seen.push(p.processed);
      },
    });
    expect(result).toMatchObject({
      total: 30,
      counts: { done: 30, requested: 0, refused: 0, skipped: 0 },
      progress: { done: 30, pending: 0 },
      finished: true,
    });
    expect(seen).toEqual([7, 14, 21, 28, 30]);
    for (let i = 1; i <= 30; i++)
      expect(await (await after.get("invoice", `inv-${i}`)).result()).toBe("paid");
    for (let i = 31; i <= 35; i++)
      expect((await after.findRun("invoice", `inv-${i}`))!.status).toBe("failed");
    expect((await after.findRun("invoice", "late"))!.status).toBe("failed");
    const one = await after.history((await after.findRun("invoice", "inv-1"))!.id);
    expect(one.filter((e) => e.kind === "replay")).toHaveLength(1);
    expect(one.find((e) => e.kind === "replay")!.detail).toMatchObject({
      requestedBy: `test (plan ${preview.token})`,
    });

    // The same plan again does nothing more.
    const again = await after.bulk.apply(preview.token);
    expect(again).toMatchObject({ counts: { done: 0, refused: 0, skipped: 30 }, finished: true });
    const oneAgain = await after.history((await after.findRun("invoice", "inv-1"))!.id);
    expect(oneAgain.filter((e) => e.kind === "replay")).toHaveLength(1);
  });

  it("an interrupted plan is carried on by another engine; outcomes already stored are not redone", async () => {
    const database = await backend.database();
    const clock = new FakeClock();
    const { engine: before, mail } = await failedInvoices(database, clock);
    await before.close();
    const first = await fixed.start({ database, clock });
    // Replaying the mail failures refuses none, but they fail again (the fix was for tax).
    const preview = await first.bulk.preview({
      action: "replay",
      selector: { workflow: "invoice", signature: mail },
    });
    expect(preview.matched).toBe(5);
    const stop = new AbortController();
    const part = await first.bulk.apply(preview.token, {
      batchSize: 2,
      signal: stop.signal,
      onProgress: () => stop.abort(),
    });
    expect(part).toMatchObject({ counts: { done: 2 }, progress: { done: 2, pending: 3 }, finished: false });
    await first.close();
    clock.advance(60 * 60_000); // past the 15 minutes: a started plan may still be carried on
    const second = closeLater(await fixed.start({ database, clock }));
    const rest = await second.bulk.apply(preview.token, { batchSize: 2 });
    expect(rest).toMatchObject({
      counts: { done: 3, skipped: 2 },
      progress: { done: 5, pending: 0 },
      finished: true,
    });
  });

  it("refuses an unknown plan, and one that expired before it started, with how to make a new one", async () => {
    const database = await backend.database();
    const clock = new FakeClock();
    const { engine, mail } = await failedInvoices(database, clock);
    closeLater(engine);
    await expect(engine.bulk.apply("plan_nope")).rejects.toMatchObject({
      code: "PLAN_NOT_FOUND",
      message: expect.stringContaining("Make one with a dry run"),
    });
    const preview = await engine.bulk.preview({ action: "replay", selector: { signature: mail } });
    clock.advance(15 * 60_000 + 1);
    await expect(engine.bulk.apply(preview.token)).rejects.toMatchObject({
      code: "PLAN_EXPIRED",
      message: expect.stringContaining(`the same selector: {"signature":"${mail}"}`),
    });
    expect((await engine.bulk.plan(preview.token)).progress).toMatchObject({ pending: 5, done: 0 });
    const cancel = await engine.bulk.preview({ action: "cancel", selector: { signature: mail } });
    await expect(engine.bulk.apply(cancel.token, { action: "replay" })).rejects.toThrow(
      /is a cancel plan; carry it out with cancel_runs/,
    );
    await expect(engine.bulk.preview({ action: "replay", selector: {} })).rejects.toThrow(/needs a selector/);
  });

  it("cancels the unfinished runs of a plan and refuses or skips the finished ones, with reasons", async () => {
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
    const handles = [];
    for (const key of ["a", "b", "c", "d"]) handles.push(await engine.getOrCreate("waiter", key));
    await handles[3]!.send("go", {});
    expect(await handles[3]!.result()).toBe("went");
    await engine.cancel(handles[2]!.id);
    const preview = await engine.bulk.preview({ action: "cancel", selector: { workflow: "waiter" } });
    expect(preview).toMatchObject({ matched: 4, eligible: 2, refusedCount: 2 });
    expect(preview.refused).toEqual(
      expect.arrayContaining([
        { run: "waiter/d", status: "completed", reason: "it already completed: there is nothing to cancel" },
        { run: "waiter/c", status: "cancelled", reason: "it is already cancelled" },
      ]),
    );
    const result = await engine.bulk.apply(preview.token);
    expect(result.counts).toEqual({ done: 2, requested: 0, refused: 1, skipped: 1 });
    expect(result.refusals.map((r) => r.run).sort()).toEqual(["waiter/c", "waiter/d"]);
    for (const key of ["a", "b"]) expect((await engine.findRun("waiter", key))!.status).toBe("cancelled");
  });
});
