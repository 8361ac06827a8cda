// Rollback over MCP through a real client: cancel_run with and without rollback, get_run's and
// diagnose_run's account of what was undone, and replay_run's dry run saying whether undone steps are redone.

import { afterEach, expect, test } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { Closer, call, connect, tempDb, text } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

test("cancel_run undoes only with rollback: true; get_run, diagnose_run and replay_run's dry run tell what was undone", async () => {
  const undone: string[] = [];
  const trip = workflow({
    queues: { go: z.object({}) },
    run: async (ctx) => {
      await ctx.rollbackCheckpoint("trip");
      await ctx.step("reserve-flight", () => ({ id: "F1" }), {
        rollback: (_rb, out) => void undone.push(out.id),
      });
      await ctx.step("reserve-hotel", () => ({ id: "H1" }), {
        rollback: (_rb, out) => void undone.push(out.id),
      });
      await ctx.queue.next("wait-go", { queue: "go" });
    },
  });
  const engine = await setup({ use: { trip } }).start({ database: tempDb(closer), clock: new FakeClock() });
  closer.add(() => engine.close());
  const client = await connect(closer, internals(engine));

  const plain = await engine.getOrCreate("trip", "plain");
  await waitForStatus(engine, plain, ["waiting"]);
  const cancelled = await call(client, "cancel_run", { workflow: "trip", key: "plain" });
  expect(cancelled.structuredContent?.outcome).toBe("cancelled");
  expect(undone).toEqual([]);
  const plainRun = await call(client, "get_run", { workflow: "trip", key: "plain" });
  expect(plainRun.structuredContent?.rollback.text).toBe(
    "cancelled; 0 of 2 steps undone; not undone: reserve-hotel, reserve-flight",
  );

  const run = await engine.getOrCreate("trip", "undo");
  await waitForStatus(engine, run, ["waiting"]);
  const asked = await call(client, "cancel_run", { workflow: "trip", key: "undo", rollback: true });
  expect(asked.structuredContent?.outcome).toBe("requested");
  await waitForStatus(engine, run, ["cancelled"]);
  expect(undone).toEqual(["H1", "F1"]);

  const got = await call(client, "get_run", { workflow: "trip", key: "undo" });
  expect(got.structuredContent?.rollback).toMatchObject({
    total: 2,
    undone: ["reserve-hotel", "reserve-flight"],
    notUndone: [],
    failed: null,
  });
  expect(text(got)).toContain("Rollback: cancelled; 2 of 2 steps undone.");
  const diagnosis = await call(client, "diagnose_run", { workflow: "trip", key: "undo" });
  expect(diagnosis.structuredContent?.summary).toContain("Rollback: cancelled; 2 of 2 steps undone.");

  const dry = await call(client, "replay_run", { workflow: "trip", key: "undo", dryRun: true });
  expect(dry.structuredContent?.undone).toEqual([
    { id: expect.any(Number), path: "reserve-hotel", redo: false },
    { id: expect.any(Number), path: "reserve-flight", redo: false },
  ]);
  expect(text(dry)).toContain("it does NOT redo 2 step(s) a rollback undid (reserve-hotel, reserve-flight)");
  expect(text(dry)).toContain('replay fromStep "reserve-flight" to redo them');
  const fromStart = await call(client, "replay_run", {
    workflow: "trip",
    key: "undo",
    dryRun: true,
    fromStep: "reserve-flight",
  });
  expect(fromStart.structuredContent?.undone.map((u: { redo: boolean }) => u.redo)).toEqual([true, true]);
  expect(text(fromStart)).toContain("it redoes 2 undone step(s)");
});
