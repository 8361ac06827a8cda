// The audit of MCP writes (in-memory pair): every write tool's call is recorded with the client's name and
// version, the run, the arguments and the outcome, refused ones too (by the tool, the SDK's argument check,
// the session guard); reads are not recorded.

import { afterEach, expect, test } from "vitest";
import { AUDIT_ARGS_MAX } from "../../src/engine/audit.js";
import { Closer, call, connect, startEngine, tempDb, until } from "./helpers.js";
import { repair } from "./workflows.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

test("start_run, send_message, cancel_run and replay_run are recorded with the client and the run", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const client = await connect(closer, engine);
  expect(
    (await call(client, "start_run", { workflow: "approval", key: "a-1", input: { amount: 5 } })).isError,
  ).toBeFalsy();
  const run = (await engine.store.findRun("approval", "a-1"))!;
  await call(client, "send_message", {
    workflow: "approval",
    key: "a-1",
    queue: "decisions",
    body: { approve: true, by: "ann" },
    idempotencyKey: "d-1",
  });
  await call(client, "start_run", { workflow: "fixable", key: "f-1" });
  await until(async () => (await engine.store.findRun("fixable", "f-1"))?.status === "failed", "f-1 to fail");
  repair("f-1");
  await call(client, "replay_run", { workflow: "fixable", key: "f-1", dryRun: false });
  await call(client, "start_run", { workflow: "sleeper", key: "s-1" });
  await call(client, "cancel_run", { workflow: "sleeper", key: "s-1" });
  await call(client, "list_runs", {});
  await call(client, "get_run", { workflow: "approval", key: "a-1" });

  const { entries } = await engine.audit.list({ limit: 50 });
  expect(entries.map((e) => [e.action, e.run?.workflow, e.run?.key, e.outcome.ok])).toEqual([
    ["cancel_run", "sleeper", "s-1", true],
    ["start_run", "sleeper", "s-1", true],
    ["replay_run", "fixable", "f-1", true],
    ["start_run", "fixable", "f-1", true],
    ["send_message", "approval", "a-1", true],
    ["start_run", "approval", "a-1", true],
  ]);
  for (const e of entries) {
    expect(e.surface).toBe("mcp");
    expect(e.client).toEqual({ name: "waymark-test", version: "1.0.0" });
  }
  const send = entries.find((e) => e.action === "send_message")!;
  expect(send.run).toEqual({ workflow: "approval", key: "a-1", runId: run.id });
  expect(send.args).toEqual({
    workflow: "approval",
    key: "a-1",
    queue: "decisions",
    body: { approve: true, by: "ann" },
    idempotencyKey: "d-1",
  });
  expect(send.argsCut).toBe(false);
  expect(Date.parse(send.at)).toBe(engine.clock.now() - (engine.clock.now() - Date.parse(send.at)));
});

test("refused writes are recorded with their error: by the tool, by argument validation, by the guard", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const client = await connect(closer, engine);
  await call(client, "start_run", { workflow: "approval", key: "a-1", input: { amount: 5 } });
  // The tool refuses: no such run; a message the queue's schema refuses.
  const missing = await call(client, "cancel_run", { workflow: "approval", key: "nope" });
  expect(missing.isError).toBe(true);
  const bad = await call(client, "send_message", {
    workflow: "approval",
    key: "a-1",
    queue: "decisions",
    body: { approve: "yes" },
  });
  expect(bad.isError).toBe(true);
  // The SDK's argument validation refuses before any handler (key is missing).
  const invalid = await call(client, "start_run", { workflow: "approval" });
  expect(invalid.isError).toBe(true);
  // The guard refuses a call nested past the message's limit, unwalked.
  let deep: unknown = "x";
  for (let i = 0; i < 200; i++) deep = { d: deep };
  const tooDeep = await call(client, "send_message", {
    workflow: "approval",
    key: "a-1",
    queue: "decisions",
    body: deep,
  });
  expect(tooDeep.isError).toBe(true);

  const { entries } = await engine.audit.list({ limit: 50 });
  const refused = entries.filter((e) => !e.outcome.ok);
  expect(refused.map((e) => [e.action, e.outcome.ok ? "" : e.outcome.code])).toEqual([
    ["send_message", "INVALID_INPUT"],
    ["start_run", "INVALID_INPUT"],
    ["send_message", "INVALID_MESSAGE"],
    ["cancel_run", "RUN_NOT_FOUND"],
  ]);
  const [deepOne, invalidOne, badOne, missingOne] = refused;
  expect(deepOne!.argsCut).toBe(true);
  expect(deepOne!.outcome).toMatchObject({ message: expect.stringContaining("64 levels") });
  expect(invalidOne!.outcome).toMatchObject({ message: expect.stringContaining("key") });
  expect(badOne!.run).toMatchObject({ workflow: "approval", key: "a-1", runId: expect.any(Number) });
  expect(missingOne!.run).toEqual({ workflow: "approval", key: "nope", runId: null });
});

test("a large body is kept cut to the bound, saying so", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const client = await connect(closer, engine);
  await call(client, "start_run", { workflow: "approval", key: "a-1", input: { amount: 5 } });
  const notes = Array.from({ length: 300 }, (_, i) => `note ${i} ${"n".repeat(30)}`);
  await call(client, "send_message", {
    workflow: "approval",
    key: "a-1",
    queue: "decisions",
    body: { approve: true, by: "b".repeat(5000), notes },
  });
  const [e] = (await engine.audit.list({ limit: 1 })).entries;
  expect(e!.argsCut).toBe(true);
  expect(typeof e!.args).toBe("string");
  expect((e!.args as string).length).toBe(AUDIT_ARGS_MAX);
  expect(e!.args as string).toContain('"workflow":"approval"');
  expect(e!.args as string).toContain("… (5000 characters)");
});

test("the waymark://audit resource fits the answer budget: newest rows, how many were left out, the cursor for list_audit", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const client = await connect(closer, engine);
  const write = { surface: "mcp" as const, client: { name: "bulk", version: "1" }, action: "send_message" };
  for (let i = 0; i < 200; i++)
    await engine.audit.record({ ...write, args: { i, note: "x".repeat(520) } }, { ok: true });
  const resource = await client.readResource({ uri: "waymark://audit" });
  const text = (resource.contents[0] as { text: string }).text;
  expect(text.length).toBeLessThanOrEqual(20_000);
  const whole = JSON.parse(text);
  expect(whole.total).toBe(200);
  expect(whole.shown).toBe(whole.entries.length);
  expect(whole.entries.length).toBeGreaterThan(5);
  expect(whole.leftOut).toBe(200 - whole.entries.length);
  expect(whole.entries[0].args.i).toBe(199);
  expect(whole.note).toContain(`${whole.leftOut} older writes are left out`);
  expect(whole.note).toContain("list_audit");
  // The cursor reads on from the last row shown.
  const older = await call(client, "list_audit", { cursor: whole.olderCursor, limit: 1 });
  const next = (older.structuredContent!.entries as Array<{ args: { i: number } }>)[0]!;
  expect(next.args.i).toBe(199 - whole.entries.length);
});
