// replay_run: dry run, real replay after a fix, refusals, and confirmation through elicitation.

import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, test } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { Closer, call, connect, startEngine, tempDb, text, until } from "./helpers.js";
import { repair } from "./workflows.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

async function failedFixable(key = "f-1"): Promise<Engine> {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("fixable", key);
  await until(
    async () => (await engine.store.findRun("fixable", key))?.status === "failed",
    "the run to fail",
  );
  return engine;
}

const entries = async (engine: Engine, key = "f-1") =>
  (await engine.history((await engine.store.findRun("fixable", key))!.id)).map(
    (e) => `${e.path}:${e.status}`,
  );

test("a dry run shows what would be discarded and changes nothing; the real replay reruns the failed step", async () => {
  const engine = await failedFixable();
  const client = await connect(closer, engine);
  const before = await entries(engine);
  const dry = await call(client, "replay_run", { workflow: "fixable", key: "f-1", dryRun: true });
  expect(dry.isError).toBeFalsy();
  expect(dry.structuredContent).toMatchObject({
    dryRun: true,
    applied: false,
    from: { path: "charge" },
    discardCount: 1,
    restoreState: { charged: 0 },
  });
  expect(text(dry)).toContain('Dry run: replaying fixable/f-1 would go from "charge"');
  expect(dry.structuredContent!.rerun).toEqual([{ id: 2, path: "charge", status: "failed", attempts: 1 }]);
  expect(text(dry)).toContain("runs 1 step again whose side effects repeat (charge)");
  expect(await entries(engine)).toEqual(before);

  // From the first step, the one that completed is listed as doing its work again.
  const early = await call(client, "replay_run", {
    workflow: "fixable",
    key: "f-1",
    fromStep: "prepare",
    dryRun: true,
  });
  expect(early.structuredContent!.rerun).toMatchObject([
    { path: "prepare", status: "completed" },
    { path: "charge", status: "failed" },
  ]);
  expect(text(early)).toContain(
    "runs 2 steps again whose side effects repeat (prepare, which completed before; charge)",
  );

  repair("f-1");
  const real = await call(client, "replay_run", { workflow: "fixable", key: "f-1" });
  expect(real.structuredContent).toMatchObject({ applied: true, dryRun: false, declined: false });
  const done = await call(client, "wait_for_run", { workflow: "fixable", key: "f-1", until: "finished" });
  expect(done.structuredContent!.status).toBe("completed");
  expect((await engine.store.findRun("fixable", "f-1"))!.state).toBe('{"charged":1}');
});

test("replay refusals are isError results that say what to do", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "a-1", { amount: 1 });
  await until(async () => (await engine.store.findRun("approval", "a-1"))?.status === "waiting", "wait");
  const client = await connect(closer, engine);
  const noFailure = await call(client, "replay_run", { workflow: "approval", key: "a-1", dryRun: true });
  expect(noFailure.isError).toBe(true);
  expect(text(noFailure)).toContain("Pass fromStep");
  const noStep = await call(client, "replay_run", { workflow: "approval", key: "a-1", fromStep: "nope" });
  expect(noStep.isError).toBe(true);
  expect(text(noStep)).toContain("record-amount, await-decision");
  const noRun = await call(client, "replay_run", { workflow: "approval", key: "a-2" });
  expect(text(noRun)).toContain("RUN_NOT_FOUND");
});

test("a real replay asks the user first when the client supports elicitation; declining changes nothing", async () => {
  const engine = await failedFixable("f-2");
  const client = await connect(closer, engine, {}, { elicitation: {} });
  const asked: string[] = [];
  let answer: "decline" | "accept" = "decline";
  client.setRequestHandler(ElicitRequestSchema, async (req) => {
    asked.push(req.params.message);
    return answer === "accept" ? { action: "accept", content: { confirm: true } } : { action: "decline" };
  });
  const before = await entries(engine, "f-2");
  const declined = await call(client, "replay_run", { workflow: "fixable", key: "f-2" });
  expect(declined.isError).toBeFalsy();
  expect(declined.structuredContent).toMatchObject({ declined: true, applied: false });
  expect(text(declined)).toContain("declined");
  expect(asked[0]).toContain('Replay run fixable/f-2 from "charge"');
  expect(await entries(engine, "f-2")).toEqual(before);

  answer = "accept";
  const accepted = await call(client, "replay_run", { workflow: "fixable", key: "f-2" });
  expect(accepted.structuredContent).toMatchObject({ declined: false, applied: true });
  expect(asked).toHaveLength(2);
  // Still broken for f-2: the replayed step fails again, and the history shows a second run of "charge".
  await until(
    async () => (await entries(engine, "f-2")).filter((e) => e.startsWith("~replay")).length > 0,
    "the replay entry",
  );
});
