// Each tool's behaviour and errors through a real SDK client over an in-memory pair.

import { afterEach, describe, expect, test } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { FakeClock } from "../../src/index.js";
import { MAX_ANSWER_CHARS } from "../../src/mcp/budget.js";
import { attachEngine, Closer, call, connect, startEngine, tempDb, text, until } from "./helpers.js";
import { registry } from "./workflows.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

async function setup() {
  const db = tempDb(closer);
  const engine = await startEngine(closer, db);
  const client = await connect(closer, engine);
  return { db, engine, client };
}

async function statusOf(engine: Awaited<ReturnType<typeof setup>>["engine"], workflow: string, key: string) {
  return (await engine.store.findRun(workflow, key))?.status;
}

describe("tool list", () => {
  test("every tool has described inputs, an output schema and annotations; --read-only hides writes", async () => {
    const { engine, client } = await setup();
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name)).toContain("replay_run");
    expect(tools.map((t) => t.name).sort()).toEqual(
      [
        "call_action",
        "cancel_run",
        "compare_runs",
        "cancel_runs",
        "diagnose_run",
        "get_history",
        "get_run",
        "get_step",
        "list_failures",
        "list_runs",
        "list_schedules",
        "list_audit",
        "list_workflows",
        "review_approvals",
        "pause_schedule",
        "resume_schedule",
        "send_message",
        "start_run",
        "wait_for_run",
        "replay_run",
        "replay_runs",
      ].sort(),
    );
    for (const t of tools) {
      expect(t.description!.length).toBeGreaterThan(80);
      expect(t.outputSchema).toBeDefined();
      expect(t.annotations?.readOnlyHint).toBeTypeOf("boolean");
      expect(t.annotations?.destructiveHint).toBeTypeOf("boolean");
      expect(t.annotations?.idempotentHint).toBeTypeOf("boolean");
      for (const [field, schema] of Object.entries(t.inputSchema.properties ?? {})) {
        expect((schema as { description?: string }).description, `${t.name}.${field}`).toBeTruthy();
      }
    }
    expect(tools.find((t) => t.name === "cancel_run")!.annotations?.destructiveHint).toBe(true);
    expect(tools.find((t) => t.name === "get_run")!.annotations?.readOnlyHint).toBe(true);

    const ro = await connect(closer, engine, { readOnly: true });
    const names = (await ro.listTools()).tools.map((t) => t.name);
    expect(names).toEqual([
      "list_workflows",
      "list_runs",
      "get_run",
      "get_history",
      "get_step",
      "diagnose_run",
      "compare_runs",
      "list_failures",
      "list_schedules",
      "review_approvals",
      "list_audit",
      "wait_for_run",
    ]);
  });
});

describe("reading", () => {
  test("list_workflows shows versions, queue schemas, actions and run counts", async () => {
    const { engine, client } = await setup();
    await engine.getOrCreate("sleeper", "s1");
    await until(async () => (await statusOf(engine, "sleeper", "s1")) === "sleeping", "sleeper to sleep");
    const r = await call(client, "list_workflows");
    expect(r.isError).toBeFalsy();
    const approval = r.structuredContent!.workflows.find((w: { name: string }) => w.name === "approval");
    expect(approval.queues.decisions.required).toEqual(["approve", "by"]);
    expect(approval.actions).toEqual(["getState", "double"]);
    expect(approval.canStart).toBe(true);
    const sleeper = r.structuredContent!.workflows.find((w: { name: string }) => w.name === "sleeper");
    expect(sleeper.runs).toEqual({ sleeping: 1 });
    expect(text(r)).toContain("sleeper v1");
    // Times in an entry's detail read as ISO, like every other time in answers.
    const nap = await call(client, "get_step", { workflow: "sleeper", key: "s1", step: "nap" });
    expect(nap.structuredContent!.detail.until).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  test("list_runs filters and pages with an opaque cursor; a bad cursor is a domain error", async () => {
    const { engine, client } = await setup();
    for (let i = 1; i <= 5; i++) await engine.getOrCreate("sleeper", `order-${i}`);
    await engine.getOrCreate("flaky", "bad-1");
    await until(async () => (await statusOf(engine, "flaky", "bad-1")) === "failed", "flaky to fail");

    const failed = await call(client, "list_runs", { status: "failed" });
    expect(failed.structuredContent!.runs.map((r: { key: string }) => r.key)).toEqual(["bad-1"]);
    expect(failed.structuredContent!.runs[0].error).toContain("card declined");

    const byError = await call(client, "list_runs", { errorContains: "declined" });
    expect(byError.structuredContent!.runs).toHaveLength(1);

    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 5; page++) {
      const r = await call(client, "list_runs", {
        workflow: "sleeper",
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...r.structuredContent!.runs.map((x: { key: string }) => x.key));
      cursor = r.structuredContent!.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(seen).toEqual(["order-5", "order-4", "order-3", "order-2", "order-1"]);

    const contains = await call(client, "list_runs", { keyContains: "der-3" });
    expect(contains.structuredContent!.runs.map((x: { key: string }) => x.key)).toEqual(["order-3"]);

    const bad = await call(client, "list_runs", { cursor: "not-a-cursor" });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/cursor/i);

    const badTime = await call(client, "list_runs", { createdAfter: "yesterday-ish" });
    expect(badTime.isError).toBe(true);
    expect(text(badTime)).toContain("ISO time");

    const badStatus = await call(client, "list_runs", { status: ["failed", "broken"] });
    expect(badStatus.isError).toBe(true);
    expect(text(badStatus)).toContain("status takes one of pending, running, sleeping, waiting");
  });

  test("get_run shows what a run waits on with the message schema and next actions", async () => {
    const { engine, client } = await setup();
    await engine.getOrCreate("approval", "a1", { amount: 120 });
    await until(async () => (await statusOf(engine, "approval", "a1")) === "waiting", "approval to wait");
    const r = await call(client, "get_run", { workflow: "approval", key: "a1" });
    const run = r.structuredContent!;
    expect(run.status).toBe("waiting");
    expect(run.input).toEqual({ amount: 120 });
    expect(run.state).toEqual({ amount: 120, decision: null });
    expect(run.waiting[0]).toMatchObject({ kind: "queue", queue: "decisions", entry: "await-decision" });
    expect(run.waiting[0].messageSchema.properties.approve.type).toBe("boolean");
    expect(run.nextActions[0]).toContain("send_message");
    expect(text(r)).toContain('Waits for message on queue "decisions"');
  });

  test("unknown runs and workflows are isError results that name what exists", async () => {
    const { engine, client } = await setup();
    await engine.getOrCreate("sleeper", "nap-1");
    const noRun = await call(client, "get_run", { workflow: "sleeper", key: "NAP-1" });
    expect(noRun.isError).toBe(true);
    expect(text(noRun)).toContain("RUN_NOT_FOUND");
    expect(text(noRun)).toContain('"nap-1"');
    expect(text(noRun)).toContain("list_runs");
    const noWorkflow = await call(client, "get_history", { workflow: "sleepr", key: "x" });
    expect(noWorkflow.isError).toBe(true);
    expect(text(noWorkflow)).toContain("approval, fixable, flaky, sleeper");
  });

  test("get_history pages through entries; get_step shows attempts, stack and state around an entry", async () => {
    const { engine, client } = await setup();
    await engine.getOrCreate("flaky", "f1", { size: 12 });
    await until(async () => (await statusOf(engine, "flaky", "f1")) === "failed", "flaky to fail");

    const page1 = await call(client, "get_history", { workflow: "flaky", key: "f1", limit: 1 });
    expect(page1.structuredContent!.entries.map((e: { path: string }) => e.path)).toEqual(["load"]);
    const page2 = await call(client, "get_history", {
      workflow: "flaky",
      key: "f1",
      limit: 1,
      cursor: page1.structuredContent!.nextCursor,
    });
    expect(page2.structuredContent!.entries[0]).toMatchObject({
      path: "charge",
      status: "failed",
      attempts: 1,
    });
    expect(page2.structuredContent!.nextCursor).toBeNull();

    const other = await engine.getOrCreate("sleeper", "s1");
    expect(other).toBeTruthy();
    const wrongRun = await call(client, "get_history", {
      workflow: "sleeper",
      key: "s1",
      cursor: page1.structuredContent!.nextCursor,
    });
    expect(wrongRun.isError).toBe(true);
    expect(text(wrongRun)).toContain("another run");

    const step = await call(client, "get_step", { workflow: "flaky", key: "f1", step: "charge" });
    expect(step.structuredContent!.attempts[0].error.message).toContain("card declined");
    expect(step.structuredContent!.attempts[0].error.stack).toContain("workflows.ts");
    expect(step.structuredContent!.stateBefore).toEqual({ blob: "b".repeat(12) });
    const load = await call(client, "get_step", { workflow: "flaky", key: "f1", step: 1 });
    expect(load.structuredContent!.stateBefore).toEqual({ blob: "" });
    expect(load.structuredContent!.stateAfter).toEqual({ blob: "b".repeat(12) });
    expect(load.structuredContent!.input).toEqual({ size: 12 });

    const missing = await call(client, "get_step", { workflow: "flaky", key: "f1", step: "refund" });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain("load, charge");
  });
});

describe("writing", () => {
  test("send_message validates with the queue's schema, is idempotent, and says the waiting run consumed it", async () => {
    const { engine, client } = await setup();
    await engine.getOrCreate("approval", "a1", { amount: 7 });
    await until(async () => (await statusOf(engine, "approval", "a1")) === "waiting", "approval to wait");

    const badQueue = await call(client, "send_message", {
      workflow: "approval",
      key: "a1",
      queue: "decision",
      body: { approve: true, by: "ann" },
    });
    expect(badQueue.isError).toBe(true);
    expect(text(badQueue)).toContain("Its queues are: decisions");

    const badBody = await call(client, "send_message", {
      workflow: "approval",
      key: "a1",
      queue: "decisions",
      body: { approve: "yes" },
    });
    expect(badBody.isError).toBe(true);
    expect(text(badBody)).toContain("approve");
    expect(text(badBody)).toContain("nothing was stored");
    expect(
      await engine.store.listMessages((await engine.store.findRun("approval", "a1"))!.id, {
        includeConsumed: true,
        limit: 10,
      }),
    ).toHaveLength(0);

    const ok = await call(client, "send_message", {
      workflow: "approval",
      key: "a1",
      queue: "decisions",
      body: { approve: true, by: "ann" },
      idempotencyKey: "decision-a1",
    });
    expect(ok.isError).toBeFalsy();
    expect(ok.structuredContent).toMatchObject({
      duplicate: false,
      runWasWaiting: true,
      consumed: true,
      consumedBy: "await-decision",
    });
    expect(text(ok)).toContain("consumed it");

    const again = await call(client, "send_message", {
      workflow: "approval",
      key: "a1",
      queue: "decisions",
      body: { approve: false, by: "bob" },
      idempotencyKey: "decision-a1",
    });
    if (!again.isError) {
      expect(again.structuredContent).toMatchObject({
        duplicate: true,
        messageId: ok.structuredContent!.messageId,
      });
    } else {
      // The run finished in between: a finished run takes no messages, and says so.
      expect(text(again)).toContain("RUN_FINISHED");
    }
    await until(
      async () => (await statusOf(engine, "approval", "a1")) === "completed",
      "approval to complete",
    );
    const finished = await call(client, "send_message", {
      workflow: "approval",
      key: "a1",
      queue: "decisions",
      body: { approve: true, by: "ann" },
    });
    expect(finished.isError).toBe(true);
    expect(text(finished)).toContain("completed");
  });

  test("start_run is idempotent by key; cancel_run cancels once; call_action runs the workflow's action", async () => {
    const { engine, client } = await setup();
    const first = await call(client, "start_run", { workflow: "sleeper", key: "s1" });
    expect(first.structuredContent).toMatchObject({ created: true, run: { workflow: "sleeper", key: "s1" } });
    const second = await call(client, "start_run", { workflow: "sleeper", key: "s1" });
    expect(second.structuredContent!.created).toBe(false);
    const unknown = await call(client, "start_run", { workflow: "nope", key: "x" });
    expect(unknown.isError).toBe(true);
    expect(text(unknown)).toContain("approval, fixable, flaky, sleeper");

    await until(async () => (await statusOf(engine, "sleeper", "s1")) === "sleeping", "sleeper to sleep");
    const cancel = await call(client, "cancel_run", { workflow: "sleeper", key: "s1" });
    expect(cancel.structuredContent).toEqual({ outcome: "cancelled", status: "cancelled" });
    const cancelAgain = await call(client, "cancel_run", { workflow: "sleeper", key: "s1" });
    expect(cancelAgain.structuredContent!.outcome).toBe("already-finished");

    await call(client, "start_run", { workflow: "approval", key: "a2", input: { amount: 3 } });
    await until(async () => (await statusOf(engine, "approval", "a2")) === "waiting", "approval to wait");
    const state = await call(client, "call_action", { workflow: "approval", key: "a2", action: "getState" });
    expect(state.structuredContent!.result).toEqual({ amount: 3, decision: null });
    const doubled = await call(client, "call_action", {
      workflow: "approval",
      key: "a2",
      action: "double",
      args: [21],
    });
    expect(doubled.structuredContent!.result).toBe(42);
    const noAction = await call(client, "call_action", {
      workflow: "approval",
      key: "a2",
      action: "approve",
    });
    expect(noAction.isError).toBe(true);
    expect(text(noAction)).toContain("getState, double");
  });

  test("wait_for_run returns on the status change and sends progress notifications", async () => {
    const { engine, client } = await setup();
    await engine.getOrCreate("approval", "a1", { amount: 1 });
    await until(async () => (await statusOf(engine, "approval", "a1")) === "waiting", "approval to wait");
    const progress: string[] = [];
    const waiting = client.callTool(
      {
        name: "wait_for_run",
        arguments: { workflow: "approval", key: "a1", until: "finished", timeoutSeconds: 30 },
      },
      undefined,
      { onprogress: (p) => progress.push(p.message ?? "") },
    );
    await until(() => progress.length > 0, "the first progress notification");
    await call(client, "send_message", {
      workflow: "approval",
      key: "a1",
      queue: "decisions",
      body: { approve: true, by: "ann" },
    });
    const r = (await waiting) as { structuredContent: Record<string, unknown> };
    expect(r.structuredContent).toMatchObject({
      status: "completed",
      fromStatus: "waiting",
      finished: true,
      timedOut: false,
    });
    expect(progress[0]).toContain("waiting for approval/a1");

    const quick = await call(client, "wait_for_run", {
      workflow: "approval",
      key: "a1",
      fromStatus: "waiting",
    });
    expect(quick.structuredContent).toMatchObject({ status: "completed", changed: true, timedOut: false });
  });

  test("wait_for_run's timeout runs on the engine's clock; send_message hears the consumption, not a poll", async () => {
    const clock = new FakeClock();
    const engine = (await registry.start({ database: tempDb(closer), clock })) as unknown as Engine;
    closer.add(() => engine.close());
    const client = await connect(closer, engine);
    const run = await engine.getOrCreate("approval", "a9", { amount: 1 });
    await engine.watchRun(run.id, (r) => r.status === "waiting");
    let answered = false;
    const waiting = call(client, "wait_for_run", {
      workflow: "approval",
      key: "a9",
      until: "finished",
      timeoutSeconds: 50,
    }).then((r) => {
      answered = true;
      return r;
    });
    await until(() => engine.events.observed, "the tool to start watching");
    clock.advance(49_000);
    await engine.tick();
    expect(answered).toBe(false);
    clock.advance(1_000);
    expect((await waiting).structuredContent).toMatchObject({
      status: "waiting",
      finished: false,
      timedOut: true,
      waitedMs: 50_000,
    });

    const sent = await call(client, "send_message", {
      workflow: "approval",
      key: "a9",
      queue: "decisions",
      body: { approve: true, by: "ann" },
    });
    expect(sent.structuredContent).toMatchObject({
      runWasWaiting: true,
      consumed: true,
      consumedBy: "await-decision",
    });
  });

  test("beside an application (attached, no code): start_run and call_action are not listed; list_workflows says --registry", async () => {
    const db = tempDb(closer);
    const owner = await startEngine(closer, db);
    await owner.getOrCreate("sleeper", "s1");
    const attached = await attachEngine(closer, db);
    const client = await connect(closer, attached);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).not.toContain("start_run");
    expect(names).not.toContain("call_action");
    expect(names).toEqual(expect.arrayContaining(["list_runs", "send_message", "cancel_run", "replay_run"]));
    const r = await call(client, "start_run", { workflow: "sleeper", key: "s2" });
    expect(r.isError).toBe(true);
    expect(text(r)).toContain("Tool start_run not found");
    const wf = await call(client, "list_workflows");
    const sleeper = wf.structuredContent!.workflows.find((w: { name: string }) => w.name === "sleeper");
    expect(sleeper.canStart).toBe(false);
    expect(text(wf)).toContain("start_run: not here (this server has no code for it: waymark mcp --registry");
    const approval = wf.structuredContent!.workflows.find((w: { name: string }) => w.name === "approval");
    expect(Object.keys(approval.queues)).toEqual(["decisions"]);
  });
});

describe("size budget", () => {
  test("large values are cut with a note and a resource link; the resource holds them whole", async () => {
    const { engine, client } = await setup();
    await engine.getOrCreate("flaky", "big", { size: 200_000 });
    await until(async () => (await statusOf(engine, "flaky", "big")) === "failed", "big flaky to fail");
    for (const [name, args] of [
      ["get_run", { workflow: "flaky", key: "big" }],
      ["get_history", { workflow: "flaky", key: "big" }],
      ["get_step", { workflow: "flaky", key: "big", step: "load" }],
      ["list_runs", {}],
    ] as const) {
      const r = await call(client, name, args);
      expect(r.isError, name).toBeFalsy();
      expect(JSON.stringify(r).length, name).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    }
    const step = await call(client, "get_step", { workflow: "flaky", key: "big", step: "load" });
    expect(step.structuredContent!.output).toMatchObject({ truncated: true, chars: 200_011 });
    expect(text(step)).toContain("too large");
    const link = step.content.find((c) => c.type === "resource_link") as { uri: string };
    expect(link.uri).toBe("waymark://runs/flaky/big/steps/1");
    const whole = await client.readResource({ uri: link.uri });
    const entry = JSON.parse((whole.contents[0] as { text: string }).text);
    expect(entry.output.data).toHaveLength(200_000);
  });
});
