// Rollback handlers on SQLite and PostgreSQL: the order of undo, the checkpoint, a failing handler and a
// replay that goes on with the rest, cancel with and without rollback, steps in join branches and loops.

import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import { attach, FakeClock, FatalError, setup, workflow } from "../../src/index.js";
import type { RollbackContext } from "../../src/workflow.js";
import { closeLater, tempDb, tempDir, until } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const BACKENDS = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
] as const;

/** A booking-like workflow: three reservations with undo, then a payment that fails for good. */
function booking(timeline: string[], options: { failRefund?: () => boolean } = {}) {
  const seen: Array<{ step: string; error: string; output: unknown; aborted: boolean }> = [];
  const record = (rb: RollbackContext, output: unknown) => {
    seen.push({ step: rb.step, error: rb.error.message, output, aborted: rb.signal.aborted });
  };
  const wf = workflow({
    queues: { go: z.object({ ok: z.boolean() }) },
    run: async (ctx, input: { pay: boolean }) => {
      await ctx.rollbackCheckpoint("booking");
      await ctx.step(
        "reserve-flight",
        () => {
          timeline.push("flight");
          return { id: "F1" };
        },
        {
          rollback: async (rb, out) => {
            record(rb, out);
            timeline.push(`undo-flight:${out.id}`);
          },
        },
      );
      await ctx.step(
        "reserve-hotel",
        () => {
          timeline.push("hotel");
          return { id: "H1" };
        },
        {
          rollback: async (rb, out) => {
            record(rb, out);
            timeline.push(`undo-hotel:${out.id}`);
          },
        },
      );
      await ctx.step(
        "reserve-car",
        () => {
          timeline.push("car");
          return { id: "C1" };
        },
        {
          retries: 1,
          backoff: { initial: 0, jitter: false },
          rollback: async (rb, out) => {
            record(rb, out);
            timeline.push(`undo-car:${out.id}`);
            if (options.failRefund?.()) throw new Error("car desk closed");
          },
        },
      );
      if (!input.pay) await ctx.queue.next("wait-go", { queue: "go" });
      await ctx.step(
        "capture-payment",
        () => {
          timeline.push("pay");
          throw new FatalError("card declined");
        },
        { retries: 0 },
      );
    },
  });
  return { wf, seen };
}

describe.each(BACKENDS)("rollback handlers on $name", ({ database }) => {
  it("undoes completed steps in reverse order of completion, each recorded, then fails with the cause", async () => {
    const clock = new FakeClock();
    const timeline: string[] = [];
    const { wf, seen } = booking(timeline);
    const engine = closeLater(
      await setup({ use: { booking: wf } }).start({ database: await database(), clock }),
    );
    const statuses: string[] = [];
    engine.on((e) => {
      if (e.type === "run") statuses.push(e.status);
    });
    const run = await engine.getOrCreate("booking", "b-1", { pay: true });
    const info = await waitForStatus(engine, run, ["failed"]);
    expect(timeline).toEqual([
      "flight",
      "hotel",
      "car",
      "pay",
      "undo-car:C1",
      "undo-hotel:H1",
      "undo-flight:F1",
    ]);
    expect(statuses).toContain("rolling-back");
    expect(info.error?.code).toBe("STEP_FAILED");
    expect(info.error?.message).toContain("card declined");
    expect(seen.map((s) => s.step)).toEqual(["reserve-car", "reserve-hotel", "reserve-flight"]);
    expect(seen.every((s) => s.error.includes("card declined") && !s.aborted)).toBe(true);
    const history = await run.history();
    expect(history.filter((e) => e.kind === "rollback").map((e) => `${e.name}:${e.status}`)).toEqual([
      "reserve-car:completed",
      "reserve-hotel:completed",
      "reserve-flight:completed",
    ]);
    expect(history.find((e) => e.kind === "checkpoint")?.name).toBe("booking");
    // A replay's dry run says the undone steps stay undone unless the replay starts at or before them.
    const plan = await engine.replay(run, { dryRun: true });
    expect("undone" in plan && plan.undone?.map((u) => `${u.path}:${u.redo}`)).toEqual([
      "reserve-car:false",
      "reserve-hotel:false",
      "reserve-flight:false",
    ]);
    const early = await engine.replay(run, { dryRun: true, fromStep: "reserve-hotel" });
    expect("undone" in early && early.undone?.map((u) => `${u.path}:${u.redo}`)).toEqual([
      "reserve-car:true",
      "reserve-hotel:true",
      "reserve-flight:false",
    ]);
  });

  it("refuses a step with a rollback handler reached before any checkpoint, naming the fix", async () => {
    const timeline: string[] = [];
    const wf = workflow({
      run: async (ctx) => {
        await ctx.step("charge", () => timeline.push("charge"), { rollback: () => {} });
      },
    });
    const engine = closeLater(
      await setup({ use: { wf } }).start({ database: await database(), clock: new FakeClock() }),
    );
    const run = await engine.getOrCreate("wf", "k");
    const info = await waitForStatus(engine, run, ["failed"]);
    expect(timeline).toEqual([]);
    expect(info.error?.code).toBe("ROLLBACK_NOT_ARMED");
    expect(info.error?.message).toContain('await ctx.rollbackCheckpoint("name")');
    expect(await run.history()).toEqual([]);
  });

  it("a handler failing after its retries leaves the run failed with both errors; a replay goes on with the rest", async () => {
    const clock = new FakeClock();
    const timeline: string[] = [];
    let broken = true;
    const { wf } = booking(timeline, { failRefund: () => broken });
    const engine = closeLater(
      await setup({ use: { booking: wf } }).start({ database: await database(), clock }),
    );
    const run = await engine.getOrCreate("booking", "b-2", { pay: true });
    const info = await waitForStatus(engine, run, ["failed"]);
    // retries: 1 on reserve-car, so its handler runs twice, then nothing else is undone
    expect(timeline.slice(4)).toEqual(["undo-car:C1", "undo-car:C1"]);
    expect(info.error?.code).toBe("ROLLBACK_FAILED");
    // Both errors in the message: the cause's own text and the handler's.
    expect(info.error?.message).toContain(
      "failed at capture-payment (FatalError: card declined); 0 of 3 steps undone",
    );
    expect(info.error?.message).toContain("car desk closed. Fix the handler");
    expect((info.error!.details!.cause as { message: string }).message).toContain("card declined");

    broken = false;
    timeline.length = 0;
    const plan = await engine.replay(run, { dryRun: true });
    expect("discard" in plan && plan.discard.map((d) => d.path)).toEqual(["~rollback/reserve-car"]);
    await engine.replay(run);
    const after = await waitForStatus(engine, run, ["failed"]);
    expect(timeline).toEqual(["undo-car:C1", "undo-hotel:H1", "undo-flight:F1"]);
    expect(after.error?.code).toBe("STEP_FAILED");
  });

  it("a handler that outlives its step's timeout is aborted and fails the rollback as timed out", async () => {
    let signalled: unknown = null;
    const wf = workflow({
      run: async (ctx) => {
        await ctx.rollbackCheckpoint("c");
        await ctx.step("hold", () => "held", {
          retries: 0,
          timeout: 50,
          rollback: (rb) =>
            new Promise<void>(() => {
              rb.signal.addEventListener("abort", () => (signalled = rb.signal.reason));
            }),
        });
        await ctx.step("boom", () => {
          throw new FatalError("card declined");
        });
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: await database() }));
    const run = await engine.getOrCreate("wf", "t-1");
    const info = await waitForStatus(engine, run, ["failed"]);
    expect(info.error?.code).toBe("ROLLBACK_FAILED");
    expect(info.error?.message).toMatch(/timed out|50 ms/);
    expect(signalled).toMatchObject({ code: "STEP_TIMEOUT" });
  });

  it("a cancel undoes nothing unless asked; with rollback: true the handlers run and the run ends cancelled", async () => {
    const clock = new FakeClock();
    const timeline: string[] = [];
    const { wf } = booking(timeline);
    const db = await database();
    const engine = closeLater(await setup({ use: { booking: wf } }).start({ database: db, clock }));
    const plain = await engine.getOrCreate("booking", "plain", { pay: false });
    await waitForStatus(engine, plain, ["waiting"]);
    expect(await engine.cancel(plain)).toBe("cancelled");
    expect(timeline.filter((t) => t.startsWith("undo"))).toEqual([]);

    timeline.length = 0;
    const undo = await engine.getOrCreate("booking", "undo", { pay: false });
    await waitForStatus(engine, undo, ["waiting"]);
    // Suspended, so the cancel is a request the claiming process carries out after replaying the code.
    expect(await engine.cancel(undo, { rollback: true })).toBe("requested");
    const info = await waitForStatus(engine, undo, ["cancelled", "failed"]);
    expect(info.status).toBe("cancelled");
    // Asked in this process (a request to itself, as the run was suspended): not "another process".
    expect(info.error?.message).toMatch(/was cancelled by the API \(engine\.cancel\) at /);
    expect(timeline).toEqual(["flight", "hotel", "car", "undo-car:C1", "undo-hotel:H1", "undo-flight:F1"]);
    const history = await undo.history();
    expect(history.find((e) => e.path === "wait-go")?.status).toBe("cancelled");
    expect(history.filter((e) => e.kind === "rollback" && e.status === "completed")).toHaveLength(3);

    // The same through the run's handle: run.cancel({ rollback: true }).
    timeline.length = 0;
    const handle = await engine.getOrCreate("booking", "handle", { pay: false });
    await waitForStatus(engine, handle, ["waiting"]);
    expect(await handle.cancel({ rollback: true })).toBe("requested");
    expect((await waitForStatus(engine, handle, ["cancelled", "failed"])).status).toBe("cancelled");
    expect(timeline).toEqual(["flight", "hotel", "car", "undo-car:C1", "undo-hotel:H1", "undo-flight:F1"]);
  });

  it("a cancel with rollback asked by another process (an attached engine) says so", async () => {
    const timeline: string[] = [];
    const { wf } = booking(timeline);
    const db = await database();
    const engine = closeLater(await setup({ use: { booking: wf } }).start({ database: db }));
    const remote = await engine.getOrCreate("booking", "remote", { pay: false });
    await waitForStatus(engine, remote, ["waiting"]);
    const other = closeLater(await attach({ database: db }));
    expect(await other.cancel(remote, { by: "ops", rollback: true })).toBe("requested");
    const cancelled = await waitForStatus(engine, remote, ["cancelled", "failed"]);
    expect(cancelled.error?.message).toContain("was cancelled by ops (a request from another process) at ");
    expect(timeline.filter((t) => t.startsWith("undo"))).toHaveLength(3);
  });

  it("cancel with rollback of a run executing here: its step in flight is aborted, then completed steps are undone", async () => {
    const timeline: string[] = [];
    let started = () => {};
    const working = new Promise<void>((resolve) => {
      started = resolve;
    });
    const wf = workflow({
      run: async (ctx) => {
        await ctx.rollbackCheckpoint("c");
        await ctx.step("hold", () => "held", {
          rollback: (rb, out) => void timeline.push(`undo:${out}:${rb.error.message}`),
        });
        await ctx.step("work", (step) => {
          timeline.push("working");
          started();
          return new Promise((_, reject) =>
            step.signal.addEventListener("abort", () => reject(new Error("stopped"))),
          );
        });
      },
    });
    const engine = closeLater(
      await setup({ use: { wf } }).start({ database: await database(), clock: new FakeClock() }),
    );
    const run = await engine.getOrCreate("wf", "k");
    await working;
    expect(await engine.cancel(run, { rollback: true, by: "a test" })).toBe("rolling-back");
    const info = await waitForStatus(engine, run, ["cancelled", "failed"]);
    expect(info.status).toBe("cancelled");
    expect(timeline).toEqual([
      "working",
      expect.stringMatching(/^undo:held:Run "wf\/k" was cancelled by a test/),
    ]);
    const history = await run.history();
    expect(history.find((e) => e.path === "work")?.status).toBe("cancelled");
  });

  it("undoes steps inside join branches and loop iterations too, innermost and latest first", async () => {
    const clock = new FakeClock();
    const timeline: string[] = [];
    const undo = (name: string) => ({
      rollback: () => {
        timeline.push(`undo:${name}`);
      },
    });
    const wf = workflow({
      run: async (ctx) => {
        await ctx.rollbackCheckpoint("all");
        await ctx.step("first", () => timeline.push("first"), undo("first"));
        await ctx.join("reserve", {
          flight: async (c) => {
            await c.step("hold", () => timeline.push("flight"), undo("flight"));
          },
          hotel: async (c) => {
            await c.step("hold", () => timeline.push("hotel"), undo("hotel"));
          },
        });
        await ctx.loop("legs", {
          state: 0,
          run: async (c, i) => {
            await c.step("book", () => timeline.push(`leg${i}`), undo(`leg${i}`));
            return i < 1 ? { continue: true, state: i + 1 } : { break: true, value: null };
          },
        });
        await ctx.step("fail", () => {
          throw new FatalError("no");
        });
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: await database(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    await waitForStatus(engine, run, ["failed"]);
    const forward = timeline.filter((t) => !t.startsWith("undo"));
    const undone = timeline.filter((t) => t.startsWith("undo")).map((t) => t.slice(5));
    expect(undone).toEqual([...forward].reverse());
    expect(undone.slice(0, 2)).toEqual(["leg1", "leg0"]);
    expect(undone.at(-1)).toBe("first");
  });
});

describe.each(BACKENDS)("a crash during rollback on $name", ({ database }) => {
  it("a SIGKILL in the middle of a rollback resumes the remaining handlers only", async () => {
    const db = await database();
    const ledger = path.join(tempDir(), "ledger.txt");
    fs.writeFileSync(ledger, "");
    const child = path.join(import.meta.dirname, "rollback-child.ts");
    const proc = spawn(process.execPath, ["--import", "tsx", child, db, ledger, "block"], {
      stdio: "inherit",
    });
    const exited = new Promise((r) => proc.on("exit", r));
    const reader = closeLater(await attach({ database: db }));
    // The hotel's undo is recorded running (durable) while the process hangs in it: kill it there.
    await until(
      async () => {
        const run = await reader.get("trip", "crash-me").catch(() => null);
        const history = run ? await run.history() : [];
        const hotel = history.find((e) => e.kind === "rollback" && e.name === "reserve-hotel");
        return hotel?.status === "running" && (await run!.status()) === "rolling-back";
      },
      "the hotel's undo to be recorded running",
      30_000,
    );
    proc.kill("SIGKILL");
    await exited;

    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", child, db, ledger, "finish"],
      { timeout: 60_000 },
    );
    expect(stdout.trim()).toBe('"STEP_FAILED"');
    const ran = fs.readFileSync(ledger, "utf8").trim().split("\n");
    expect(ran).toEqual([
      "flight",
      "hotel",
      "car",
      "pay",
      "undo-car",
      "undo-hotel",
      "undo-hotel",
      "undo-flight",
    ]);
    const run = await reader.get("trip", "crash-me");
    const hotel = (await run.history()).find((e) => e.kind === "rollback" && e.name === "reserve-hotel")!;
    expect(hotel.attempts!.map((a) => a.status)).toEqual(["interrupted", "completed"]);
    expect((await run.info()).status).toBe("failed");
  });
});
