// Category rules beyond the corpus: near-misses on another queue, a long wait with no clue, a first retry,
// finished and sleeping runs, and drift where the code stopped short of its history.

import os from "node:os";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { driveRun, waitForRun } from "../../fixtures/wait.js";
import { diagnose } from "../../src/diagnosis/index.js";
import { type Engine, internals } from "../../src/engine/engine.js";
import { attach, FakeClock, FatalError, setup, workflow } from "../../src/index.js";
import type { WorkflowEntry } from "../../src/workflow.js";
import { closeLater, tempDb } from "../helpers.js";

async function start(use: Record<string, WorkflowEntry>, clock = new FakeClock(), db = tempDb()) {
  const engine = closeLater(await setup({ use }).start({ database: db, clock })) as unknown as Engine;
  return { engine, clock, db };
}

const desk = workflow({
  queues: { decision: z.object({ approve: z.boolean() }), inbox: z.unknown() },
  run: async (ctx) => {
    const d = await ctx.queue.next("await-decision", { queue: "decision" });
    return d.approve;
  },
});

describe("waiting runs", () => {
  it("a message left on another queue of the run, valid for the awaited one, is a near-miss to resend", async () => {
    const { engine, clock } = await start({ desk });
    const run = await engine.getOrCreate("desk", "d-1");
    await driveRun(engine, clock, run, ["waiting"]);
    await run.send("inbox", { approve: true });
    const d = await diagnose(engine, run.id);
    expect(d.category).toBe("stuck-waiting");
    expect(d.evidence.find((e) => e.kind === "near-miss")).toMatchObject({
      fact: expect.stringContaining('unread on queue "inbox"'),
      ref: expect.stringMatching(/^message #\d+$/),
    });
    expect(d.nextActions[0]).toMatchObject({
      kind: "call",
      tool: "send_message",
      args: { workflow: "desk", key: "d-1", queue: "decision", body: { approve: true } },
    });
  });

  it("siblings whose keys differ in their numbers read their own messages: no near-miss, a healthy wait", async () => {
    const { engine, clock } = await start({ desk });
    const mine = await engine.getOrCreate("desk", "att-3");
    const sibling = await engine.getOrCreate("desk", "att-4");
    await driveRun(engine, clock, mine, ["waiting"]);
    await driveRun(engine, clock, sibling, ["waiting"]);
    await sibling.send("decision", { approve: true });
    await driveRun(engine, clock, sibling, ["completed"]);
    const d = await diagnose(engine, mine.id);
    expect(d.category).toBe("healthy");
    expect(d.evidence.some((e) => e.kind === "near-miss")).toBe(false);
    expect(
      d.nextActions.some((a) => a.kind === "call" && a.tool === "send_message" && "body" in a.args),
    ).toBe(false);
  });

  it("a refused message beside one that went astray with a valid body: both shown, the user asked to choose", async () => {
    const { engine, clock } = await start({ desk });
    const run = await engine.getOrCreate("desk", "d-9");
    await driveRun(engine, clock, run, ["waiting"]);
    await expect(run.send("decisoin" as never, { approve: true })).rejects.toThrow(/has no queue "decisoin"/);
    await expect(run.send("decision", { approve: "yes" } as never)).rejects.toThrow(/does not match/);
    const d = await diagnose(engine, run.id);
    expect(d.category).toBe("rejected-messages");
    expect(d.evidence.map((e) => e.kind)).toEqual(expect.arrayContaining(["rejected", "near-miss"]));
    expect(d.summary).toContain("Another message went astray");
    expect(d.nextActions[0]).toMatchObject({
      kind: "person",
      change: expect.stringContaining("Ask the user"),
    });
    expect(d.nextActions).toContainEqual(
      expect.objectContaining({
        kind: "call",
        tool: "send_message",
        args: expect.objectContaining({ queue: "decision", body: { approve: true } }),
      }),
    );
  });

  it("a wait with a timeout still ahead is healthy however long it has waited", async () => {
    const patientDesk = workflow({
      queues: { decision: z.object({ approve: z.boolean() }) },
      run: async (ctx) => {
        const d = await ctx.queue.next("await-payment", { queue: "decision", timeout: "30d" });
        return d?.approve ?? null;
      },
    });
    const { engine, clock } = await start({ patientDesk });
    const run = await engine.getOrCreate("patientDesk", "p-1");
    await driveRun(engine, clock, run, ["waiting"]);
    clock.advance(3 * 86_400_000);
    const d = await diagnose(engine, run.id);
    expect(d.category).toBe("healthy");
    expect(d.summary).toContain("gives up at");
  });

  it("a wait with no message for a day and no near-miss asks a person, then shows the schema", async () => {
    const { engine, clock } = await start({ desk });
    const run = await engine.getOrCreate("desk", "d-2");
    await driveRun(engine, clock, run, ["waiting"]);
    expect((await diagnose(engine, run.id)).category).toBe("healthy");
    clock.advance(25 * 3_600_000);
    const d = await diagnose(engine, run.id);
    expect(d.category).toBe("stuck-waiting");
    expect(d.summary).toContain('waited 1 d 1 h on queue "decision"');
    expect(d.nextActions.map((a) => (a.kind === "call" ? a.tool : a.kind))).toEqual(["person", "get_run"]);
    expect((await diagnose(engine, run.id, { stuckAfterMs: 30 * 3_600_000 })).category).toBe("healthy");
  });
});

describe("a dead owner on this machine", () => {
  it("is stalled at once, read without writing: attach() leaves the dead owner's lease as it was", async () => {
    const db = tempDb();
    const owner = await setup({ use: { desk } }).start({ database: db, maxActiveRuns: 0 });
    const run = await owner.getOrCreate("desk", "d-dead");
    await owner.close();
    const leaseUntil = Date.now() + 600_000;
    const dead = `${os.hostname()}:999999:gone`;
    const raw = new Database(db);
    raw
      .prepare("UPDATE runs SET status = 'running', owner = ?, lease_until = ? WHERE id = ?")
      .run(dead, leaseUntil, run.id);
    raw.close();
    const reader = closeLater(await attach({ database: db }));
    const d = await diagnose(internals(reader), run.id);
    expect(d.category).toBe("stalled");
    expect(d.summary).toContain("(pid 999999 on this machine) no longer exists");
    expect((await internals(reader).store.getRun(run.id))?.leaseUntil).toBe(leaseUntil);
  });
});

describe("runs that are fine", () => {
  const flaky = workflow({
    run: async (ctx) => {
      await ctx.step("call", (s) => {
        if (s.attempt < 3) throw new Error(`upstream 502 on try ${s.attempt}`);
        return "ok";
      });
      await ctx.sleep("rest", "1h");
      return "done";
    },
  });

  it("a first retry is healthy, a sleep is healthy, a completed run is healthy", async () => {
    const { engine, clock } = await start({ flaky });
    const run = await engine.getOrCreate("flaky", "f-1");
    await driveRun(engine, clock, run, ["retrying"]);
    const retrying = await diagnose(engine, run.id);
    expect(retrying.category).toBe("healthy");
    expect(retrying.culprit?.path).toBe("call");
    expect(retrying.summary).toContain("retries on its own: attempt #2 is due at");
    expect(retrying.similar?.count).toBe(1);
    await driveRun(engine, clock, run, ["sleeping"]);
    const sleeping = await diagnose(engine, run.id);
    expect(sleeping.category).toBe("healthy");
    expect(sleeping.summary).toContain('sleeps at "rest" until 2026-01-01T01:00:');
    await driveRun(engine, clock, run, ["completed"]);
    const done = await diagnose(engine, run.id);
    expect(done.category).toBe("healthy");
    expect(done.summary).toContain('with output "done"');
    expect(done.nextActions[0]).toMatchObject({ tool: "get_history" });
    expect(done.similar).toBeNull();
  });
});

describe("code drift", () => {
  it("a step removed from the code: history holds more than the code asks for, replay from it completes", async () => {
    const before = workflow({
      run: async (ctx) => {
        await ctx.step("a", () => 1);
        await ctx.sleep("nap", "1m");
        await ctx.step("audit", () => 2);
        await ctx.sleep("nap-2", "1m");
      },
    });
    const after = workflow({
      run: async (ctx) => {
        await ctx.step("a", () => 1);
        await ctx.sleep("nap", "1m");
      },
    });
    const clock = new FakeClock();
    const db = tempDb();
    const first = await start({ wf: before }, clock, db);
    const run = await first.engine.getOrCreate("wf", "k");
    await driveRun(first.engine, clock, run, ["sleeping"]);
    clock.advance(60_000);
    await waitForRun(first.engine, run, (i) => i.status === "sleeping" && i.wakeAt! > clock.now());
    await first.engine.close();
    const { engine } = await start({ wf: after }, clock, db);
    const handle = await engine.get("wf", "k");
    await driveRun(engine, clock, handle, ["failed"]);
    const d = await diagnose(engine, run.id);
    expect(d.category).toBe("code-drift");
    expect(d.culprit?.path).toBe("audit");
    expect(d.evidence[0]?.fact).toBe(
      'entry #3 of the root scope: history holds a step named "audit"; the code asks for nothing more (the code finishes)',
    );
    expect(d.nextActions[0]).toMatchObject({ tool: "replay_run", args: { fromStep: "audit", dryRun: true } });
    await engine.replay(run.id, { fromStep: "audit" });
    expect((await driveRun(engine, clock, handle, ["completed"])).info.status).toBe("completed");
  });
});

describe("the user's frame", () => {
  it("is named by file and line, not by V8's inferred name for the step's function (ctx.step.retries)", async () => {
    const card = workflow({
      run: async (ctx) => {
        await ctx.step(
          "charge",
          async () => {
            throw new FatalError("card declined");
          },
          { retries: 0 },
        );
      },
    });
    const { engine, clock } = await start({ card });
    const run = await engine.getOrCreate("card", "k-1");
    await driveRun(engine, clock, run, ["failed"]);
    const d = await diagnose(engine, run.id);
    const frame = d.evidence.find((e) => e.kind === "frame");
    expect(frame?.fact).toMatch(/^thrown at test\/diagnosis\/rules\.test\.ts:\d+$/);
    expect(JSON.stringify(d)).not.toContain("ctx.step.retries");
  });
});
