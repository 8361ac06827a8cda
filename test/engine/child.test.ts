// ctx.child on SQLite and PostgreSQL: a parent waits for a child run without memory, takes its output or its
// failure, detaches, and cancels its children with itself.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { ChildRunFailedError, FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, entryReached, tempDb, until } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const payment = workflow({
  queues: { confirm: z.object({ ok: z.boolean() }) },
  run: async (ctx, input: { amount: number }) => {
    await ctx.step("authorize", () => input.amount);
    const c = await ctx.queue.next("await-confirm", { queue: "confirm" });
    if (!c.ok) throw new Error(`card declined for ${input.amount}`);
    return { receipt: `r-${input.amount}` };
  },
});

const order = workflow({
  run: async (ctx, input: { orderId: string; amount: number; detach?: boolean; tolerate?: boolean }) => {
    if (input.detach) {
      const address = await ctx.child("charge", payment, {
        key: `pay-${input.orderId}`,
        input: { amount: input.amount },
        detach: true,
      });
      return { detached: address };
    }
    try {
      const receipt = await ctx.child("charge", payment, {
        key: `pay-${input.orderId}`,
        input: { amount: input.amount },
      });
      await ctx.step("ship", () => receipt.receipt);
      return { shipped: receipt.receipt };
    } catch (err) {
      if (!input.tolerate || !(err instanceof ChildRunFailedError)) throw err;
      return { unpaid: err.details.child };
    }
  },
});

const ran: string[] = [];
let declined = true;
const capture = workflow({
  run: async (ctx, input: { amount: number }) => {
    await ctx.step("authorize", () => ran.push(`authorize ${ctx.key}`));
    return ctx.step(
      "capture",
      () => {
        ran.push(`capture ${ctx.key}`);
        if (declined) throw new Error("gateway down");
        return { captured: input.amount };
      },
      { retries: 0 },
    );
  },
});
const checkout = workflow({
  run: async (ctx, input: { amount: number }) => {
    const paid = await ctx.child("charge", capture, { key: `cap-${ctx.key}`, input });
    await ctx.step("ship", () => ran.push(`ship ${ctx.key}`));
    return paid;
  },
});

const stores = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

describe.each(stores)("ctx.child on $name", ({ database }) => {
  async function start() {
    const clock = new FakeClock();
    const engine = closeLater(
      await setup({ use: { order, payment, checkout, capture } }).start({
        database: await database(),
        clock,
      }),
    );
    return { engine, clock };
  }

  it("waits for the child without memory and returns its output; the child knows its parent", async () => {
    const { engine } = await start();
    const parent = await engine.getOrCreate("order", "o-1", { orderId: "1", amount: 30 });
    await waitForStatus(engine, parent, ["waiting"]);
    const child = await engine.get("payment", "pay-1");
    await waitForStatus(engine, child, ["waiting"]);
    expect(internals(engine).active.size).toBe(0);
    expect((await parent.info()).waiting).toEqual([
      { kind: "child", entry: "charge", child: "payment/pay-1", until: null },
    ]);
    const row = (await internals(engine).store.getRun(child.id))!;
    expect(row.parentRunId).toBe(parent.id);
    expect((await internals(engine).store.childRuns(parent.id)).map((r) => r.id)).toEqual([child.id]);
    await child.send("confirm", { ok: true });
    expect(await parent.result({ timeout: 10_000 })).toEqual({ shipped: "r-30" });
    const entry = (await parent.history()).find((e) => e.name === "charge")!;
    expect(entry).toMatchObject({ kind: "child", status: "completed", output: { receipt: "r-30" } });
    expect(entry.detail).toMatchObject({ workflow: "payment", key: "pay-1", runId: child.id });
    expect((await internals(engine).store.getRun(parent.id))!.waitRuns).toBeNull();
  });

  it("a failed child fails the entry with ChildRunFailedError, which the parent can catch", async () => {
    const { engine } = await start();
    const strict = await engine.getOrCreate("order", "o-2", { orderId: "2", amount: 5 });
    const lenient = await engine.getOrCreate("order", "o-3", { orderId: "3", amount: 6, tolerate: true });
    await waitForStatus(engine, strict, ["waiting"]);
    await waitForStatus(engine, lenient, ["waiting"]);
    await (await engine.get("payment", "pay-2")).send("confirm", { ok: false });
    await (await engine.get("payment", "pay-3")).send("confirm", { ok: false });
    await expect(strict.result({ timeout: 10_000 })).rejects.toThrow(
      /Child run "payment\/pay-2" of "order\/o-2" \(entry "charge"\) failed: Error: card declined for 5/,
    );
    expect(await lenient.result({ timeout: 10_000 })).toEqual({ unpaid: "payment/pay-3" });
    const entry = (await strict.history()).find((e) => e.name === "charge")!;
    expect(entry.status).toBe("failed");
    expect(entry.error).toMatchObject({ name: "ChildRunFailedError", code: "CHILD_RUN_FAILED" });
  });

  it("a detached child returns its address at once and is left running", async () => {
    const { engine } = await start();
    const parent = await engine.getOrCreate("order", "o-4", { orderId: "4", amount: 7, detach: true });
    expect(await parent.result({ timeout: 10_000 })).toEqual({
      detached: { workflow: "payment", key: "pay-4" },
    });
    const child = await engine.get("payment", "pay-4");
    await waitForStatus(engine, child, ["waiting"]);
    await parent.cancel();
    expect(await child.status()).toBe("waiting");
  });

  it("cancelling a parent cancels its waiting child, whose history says who did; a cancelled child fails its parent", async () => {
    const { engine } = await start();
    const parent = await engine.getOrCreate("order", "o-5", { orderId: "5", amount: 8 });
    await waitForStatus(engine, parent, ["waiting"]);
    const child = await engine.get("payment", "pay-5");
    await waitForStatus(engine, child, ["waiting"]);
    expect(await parent.cancel()).toBe("cancelled");
    expect(await child.status()).toBe("cancelled");
    expect((await child.info()).error?.message).toMatch(/cancelled by parent order\/o-5/);

    const other = await engine.getOrCreate("order", "o-6", { orderId: "6", amount: 9 });
    await waitForStatus(engine, other, ["waiting"]);
    const second = await engine.get("payment", "pay-6");
    await waitForStatus(engine, second, ["waiting"]);
    await second.cancel();
    await expect(other.result({ timeout: 10_000 })).rejects.toThrow(
      /Child run "payment\/pay-6".*was cancelled/,
    );
  });

  it("a key held by a run that is not this parent's child is refused, naming the fix", async () => {
    const { engine } = await start();
    await engine.getOrCreate("payment", "pay-7", { amount: 1 });
    const parent = await engine.getOrCreate("order", "o-7", { orderId: "7", amount: 1 });
    await expect(parent.result({ timeout: 10_000 })).rejects.toThrow(
      /asked for run "payment\/pay-7", which exists already and was not started by a parent/,
    );
  });

  it("a parent suspended in one engine resumes in another when a third, sharing only the database, ends the child", async () => {
    const db = await database();
    const clock = new FakeClock();
    const first = await setup({ use: { order, payment } }).start({ database: db, clock });
    const parent = await first.getOrCreate("order", "o-8", { orderId: "8", amount: 4 });
    await waitForStatus(first, parent, ["waiting"]);
    const child = await first.get("payment", "pay-8");
    await waitForStatus(first, child, ["waiting"]);
    await first.close();
    const orders = closeLater(await setup({ use: { order } }).start({ database: db, clock }));
    const payments = closeLater(await setup({ use: { payment } }).start({ database: db, clock }));
    await (await payments.get("payment", "pay-8")).send("confirm", { ok: true });
    const handle = await orders.get("order", "o-8");
    expect(await handle.result({ timeout: 10_000 })).toEqual({ shipped: "r-4" });
  });

  it("a replay of the parent reuses a completed child and replays a failed one from its failed step; the dry run says which", async () => {
    const { engine } = await start();
    ran.length = 0;
    declined = true;
    const failed = await engine.getOrCreate("checkout", "c-1", { amount: 5 });
    await expect(failed.result({ timeout: 10_000 })).rejects.toThrow(/gateway down/);
    const dry = await engine.replay(failed, { fromStep: "charge", dryRun: true });
    expect(dry).toMatchObject({
      children: [
        {
          entry: { path: "charge" },
          workflow: "capture",
          key: "cap-c-1",
          status: "failed",
          action: "replay",
        },
      ],
    });
    declined = false;
    await engine.replay(failed, { fromStep: "charge" });
    expect(await failed.result({ timeout: 10_000 })).toEqual({ captured: 5 });
    // The child ran again from its failed step only: authorize once, capture twice.
    expect(ran).toEqual(["authorize cap-c-1", "capture cap-c-1", "capture cap-c-1", "ship c-1"]);

    ran.length = 0;
    const again = await engine.replay(failed, { fromStep: "charge", dryRun: true });
    expect(again).toMatchObject({ children: [{ key: "cap-c-1", status: "completed", action: "reuse" }] });
    await engine.replay(failed, { fromStep: "charge" });
    expect(await failed.result({ timeout: 10_000 })).toEqual({ captured: 5 });
    expect(ran).toEqual(["ship c-1"]); // the completed child was reused: nothing of it ran again
  });

  it("code drift on a child entry names it: new code that asks for something else there fails naming the child entry", async () => {
    const db = await database();
    const clock = new FakeClock();
    const first = await setup({ use: { order, payment } }).start({ database: db, clock });
    const parent = await first.getOrCreate("order", "o-10", { orderId: "10", amount: 3 });
    await waitForStatus(first, parent, ["waiting"]);
    await first.close();
    const drifted = workflow({
      run: async (ctx, _input: { orderId: string }) => ctx.step("charge-inline", () => "paid"),
    });
    const second = closeLater(
      await setup({ use: { order: drifted, payment } }).start({ database: db, clock, deployCheck: false }),
    );
    await (await second.get("payment", "pay-10")).send("confirm", { ok: true });
    const run = await second.get("order", "o-10");
    await expect(run.result({ timeout: 10_000 })).rejects.toThrow(
      /history holds a child run named "charge"; the code asked for a step named "charge-inline"/,
    );
    expect((await second.diagnose(run.id)).category).toBe("code-drift");
  });

  it("a parent held in memory (a step in flight beside the child wait) sees the child end in another engine", async () => {
    const db = await database();
    let release: () => void = () => {};
    const held = new Promise<void>((r) => {
      release = r;
    });
    const busy = workflow({
      run: async (ctx) =>
        ctx.join("both", {
          pay: (c) => c.child("charge", payment, { key: `pay-${ctx.key}`, input: { amount: 2 } }),
          work: (c) => c.step("slow", () => held.then(() => "worked")),
        }),
    });
    // At most one run in memory: the parent, so the child is left to the other engine.
    const parents = closeLater(
      await setup({ use: { busy, payment } }).start({ database: db, maxActiveRuns: 1, deployCheck: false }),
    );
    const parent = await parents.getOrCreate("busy", "b-1");
    const children = closeLater(
      await setup({ use: { payment } }).start({ database: db, deployCheck: false }),
    );
    await until(() => children.findRun("payment", "pay-b-1"), "the child run to be created");
    const child = await children.get("payment", "pay-b-1");
    await waitForStatus(children, child, ["waiting"]);
    const charged = entryReached(internals(parents), "both[pay]/charge");
    await child.send("confirm", { ok: true });
    expect(await child.result({ timeout: 10_000 })).toEqual({ receipt: "r-2" });
    expect((await charged).status).toBe("completed");
    expect(internals(parents).active.has(parent.id)).toBe(true); // it never left memory
    release();
    expect(await parent.result({ timeout: 10_000 })).toEqual({ pay: { receipt: "r-2" }, work: "worked" });
  });
});
