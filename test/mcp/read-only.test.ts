// A read-only server never points at the tools it hides; wait_for_run on a finished run; prompt arguments
// (completion, descriptions) and prompt errors. Through a real SDK client over an in-memory pair.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, describe, expect, test } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { Closer, call, connect, startEngine, tempDb, text, until } from "./helpers.js";

const WRITE_TOOLS = ["send_message", "replay_run", "start_run", "cancel_run", "call_action"];

const closer = new Closer();
afterEach(() => closer.closeAll());

async function setup(readOnly: boolean) {
  const engine = await startEngine(closer, tempDb(closer));
  const client = await connect(closer, engine, { readOnly });
  return { engine, client };
}

async function settled(engine: Engine, workflow: string, key: string, status: string) {
  await until(
    async () => (await engine.store.findRun(workflow, key))?.status === status,
    `${workflow}/${key} ${status}`,
  );
}

async function toolNames(client: Client): Promise<string[]> {
  return (await client.listTools()).tools.map((t) => t.name);
}

/** The tools a "tool {args}" line or a numbered "N. tool {args}" line tells the model to call. */
function calledTools(lines: string[]): string[] {
  return lines.flatMap((l) => /^(?:\d+\.\s+)?([a-z_]+) \{/.exec(l.trim())?.[1] ?? []);
}

function promptText(prompt: { messages: Array<{ content: unknown }> }): string {
  return (prompt.messages[0]!.content as { text: string }).text;
}

describe("read-only: no answer or prompt points at a hidden tool", () => {
  test("get_run and diagnose_run of a failed run: read calls stay, the replay becomes a note", async () => {
    const { engine, client } = await setup(true);
    await engine.getOrCreate("flaky", "f-1");
    await settled(engine, "flaky", "f-1", "failed");
    const offered = await toolNames(client);
    for (const t of WRITE_TOOLS) expect(offered).not.toContain(t);

    const run = (await call(client, "get_run", { workflow: "flaky", key: "f-1" })).structuredContent!;
    const runCalls = calledTools(run.nextActions);
    expect(runCalls).toEqual(["get_step", "get_history"]);
    for (const t of runCalls) expect(offered).toContain(t);
    const note = run.nextActions.find((a: string) => a.startsWith("(person)"));
    expect(note).toContain("read-only");
    expect(note).toContain("writable");

    const r = await call(client, "diagnose_run", { workflow: "flaky", key: "f-1" });
    expect(r.isError).toBeFalsy();
    const actions = r.structuredContent!.nextActions as Array<{
      kind: string;
      tool?: string;
      change?: string;
    }>;
    for (const a of actions) if (a.kind === "call") expect(offered).toContain(a.tool);
    // What stays: the person's fix, one note for the replay (dry run and real one together), the read call after.
    expect(actions.map((a) => a.tool ?? a.kind)).toEqual(["person", "person", "wait_for_run"]);
    expect(actions[1]!.change).toContain("read-only");
    expect(actions[1]!.change).toContain('"dryRun":true');
    for (const t of calledTools(text(r).split("\n"))) expect(offered).toContain(t);
  });

  test("a run waiting on a queue: get_run does not suggest send_message", async () => {
    const { engine, client } = await setup(true);
    await engine.getOrCreate("approval", "a-1", { amount: 3 });
    await settled(engine, "approval", "a-1", "waiting");
    const r = await call(client, "get_run", { workflow: "approval", key: "a-1" });
    const next = r.structuredContent!.nextActions as string[];
    expect(calledTools(next)).toEqual(["get_history"]);
    expect(next[0]).toMatch(/^\(person\) .*read-only.*queue "decisions"/);
    for (const t of calledTools(text(r).split(/ \| |\n|Next: /))) expect(WRITE_TOOLS).not.toContain(t);
    const d = await call(client, "diagnose_run", { workflow: "approval", key: "a-1" });
    for (const a of d.structuredContent!.nextActions)
      if (a.kind === "call") expect(WRITE_TOOLS).not.toContain(a.tool);
  });

  test("the prompts do not tell the model to call hidden tools", async () => {
    const { engine, client } = await setup(true);
    await engine.getOrCreate("approval", "a-1", { amount: 3 });
    await engine.getOrCreate("flaky", "f-1");
    await settled(engine, "approval", "a-1", "waiting");
    await settled(engine, "flaky", "f-1", "failed");

    const review = promptText(await client.getPrompt({ name: "review_pending_approvals", arguments: {} }));
    expect(review).toContain("approval/a-1");
    expect(review).toContain("read-only");
    for (const t of WRITE_TOOLS) expect(review).not.toContain(t);

    const diag = promptText(
      await client.getPrompt({ name: "diagnose_failed_run", arguments: { workflow: "flaky", key: "f-1" } }),
    );
    expect(diag).toContain("fatal-error");
    expect(diag).toContain("read-only");
    for (const t of calledTools(diag.split("\n"))) expect(WRITE_TOOLS).not.toContain(t);
    expect(diag).not.toContain("Run replay_run with dryRun");
  });

  test("a writable server still suggests the write calls", async () => {
    const { engine, client } = await setup(false);
    await engine.getOrCreate("flaky", "f-1");
    await settled(engine, "flaky", "f-1", "failed");
    const run = (await call(client, "get_run", { workflow: "flaky", key: "f-1" })).structuredContent!;
    expect(calledTools(run.nextActions)).toEqual(["get_step", "replay_run", "get_history"]);
    const d = (await call(client, "diagnose_run", { workflow: "flaky", key: "f-1" })).structuredContent!;
    expect(d.nextActions.map((a: { tool?: string; kind: string }) => a.tool ?? a.kind)).toEqual([
      "person",
      "replay_run",
      "replay_run",
      "wait_for_run",
    ]);
    const review = promptText(await client.getPrompt({ name: "review_pending_approvals", arguments: {} }));
    expect(review).toContain("send_message");
  });
});

describe("wait_for_run on a finished run", () => {
  test('until "change" (the default) returns at once with finished: true', async () => {
    const { engine, client } = await setup(true);
    await engine.getOrCreate("flaky", "f-1");
    await settled(engine, "flaky", "f-1", "failed");
    // Nothing will change: had it waited, it would answer timedOut: true after the 20 s (no timed assertion).
    const r = await call(client, "wait_for_run", { workflow: "flaky", key: "f-1", timeoutSeconds: 20 });
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toMatchObject({
      status: "failed",
      fromStatus: "failed",
      changed: false,
      finished: true,
      timedOut: false,
    });
    expect(text(r)).toContain("already failed");
    expect(text(r)).not.toContain("Call wait_for_run again");

    // The same with fromStatus given as the finished status.
    const again = await call(client, "wait_for_run", {
      workflow: "flaky",
      key: "f-1",
      fromStatus: "failed",
      timeoutSeconds: 20,
    });
    expect(again.structuredContent).toMatchObject({ finished: true, timedOut: false });
  });
});

describe("prompt arguments and errors", () => {
  test("review_pending_approvals: its optional workflow argument is described and completes", async () => {
    const { engine, client } = await setup(true);
    await engine.getOrCreate("approval", "a-1", { amount: 3 });
    await settled(engine, "approval", "a-1", "waiting");
    const { prompts } = await client.listPrompts();
    const review = prompts.find((p) => p.name === "review_pending_approvals")!;
    const arg = review.arguments!.find((a) => a.name === "workflow")!;
    expect(arg.required).toBe(false);
    expect(arg.description).toBeTruthy();
    const done = await client.complete({
      ref: { type: "ref/prompt", name: "review_pending_approvals" },
      argument: { name: "workflow", value: "app" },
    });
    expect(done.completion.values).toEqual(["approval"]);
    const all = await client.complete({
      ref: { type: "ref/prompt", name: "review_pending_approvals" },
      argument: { name: "workflow", value: "" },
    });
    expect(all.completion.values).toEqual(["approval"]);
    const only = promptText(
      await client.getPrompt({ name: "review_pending_approvals", arguments: { workflow: "approval" } }),
    );
    expect(only).toContain("approval/a-1");
  });

  test("an unknown workflow is invalid params naming the known workflows, not an internal error", async () => {
    const { engine, client } = await setup(false);
    await engine.getOrCreate("flaky", "f-1");
    await settled(engine, "flaky", "f-1", "failed");
    const err = await client
      .getPrompt({ name: "diagnose_failed_run", arguments: { workflow: "nope", key: "f-1" } })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect(err).toBeInstanceOf(McpError);
    expect((err as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((err as McpError).message).toContain('no workflow "nope"');
    expect((err as McpError).message).toContain("approval, fixable, flaky, sleeper");

    const noKey = await client
      .getPrompt({ name: "diagnose_failed_run", arguments: { workflow: "flaky", key: "F-1" } })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect((noKey as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((noKey as McpError).message).toContain('"f-1"');

    const review = await client
      .getPrompt({ name: "review_pending_approvals", arguments: { workflow: "nope" } })
      .then(
        () => null,
        (e: unknown) => e,
      );
    expect((review as McpError).code).toBe(ErrorCode.InvalidParams);
    expect((review as McpError).message).toContain("flaky");
  });
});
