// Child runs over a real stdio MCP client: get_run shows a parent and its children with their statuses,
// diagnose_run on a parent whose child failed follows the chain down to the child's culprit step.

import { afterEach, expect, test } from "vitest";
import { TOOLS } from "../../src/mcp/tools/index.js";
import { Closer, call, stdioClient, tempDb, text, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

async function server() {
  const db = tempDb(closer);
  const { client } = await stdioClient(closer, [
    "--create",
    "--db",
    db,
    "--registry",
    "fixtures/registry.ts",
  ]);
  const status = async (workflow: string, key: string) =>
    (await call(client, "get_run", { workflow, key })).structuredContent?.status;
  const reach = (workflow: string, key: string, want: string) =>
    until(async () => (await status(workflow, key)) === want, `${workflow}/${key} ${want}`);
  return { client, reach };
}

test("get_run shows the parent of a child and the children of a parent, with statuses and the entry", async () => {
  const { client, reach } = await server();
  await call(client, "start_run", {
    workflow: "order",
    key: "o-1",
    input: { orderId: "1", amount: 20, card: "4242" },
  });
  await call(client, "start_run", {
    workflow: "order",
    key: "o-2",
    input: { orderId: "2", amount: 250, card: "4242" },
  });
  await reach("order", "o-1", "completed");
  await reach("payment", "pay-2", "waiting");
  await reach("order", "o-2", "waiting");

  const parent = await call(client, "get_run", { workflow: "order", key: "o-1" });
  expect(parent.structuredContent).toMatchObject({
    parent: null,
    children: [{ workflow: "payment", key: "pay-1", status: "completed", entry: "charge", detached: false }],
  });
  expect(text(parent)).toContain('Children: payment/pay-1 completed (entry "charge")');
  const child = await call(client, "get_run", { workflow: "payment", key: "pay-1" });
  expect(child.structuredContent).toMatchObject({
    parent: { workflow: "order", key: "o-1", status: "completed" },
    children: [],
  });
  expect(text(child)).toContain("Started by order/o-1 (completed).");

  const waiting = await call(client, "get_run", { workflow: "order", key: "o-2" });
  expect(waiting.structuredContent!.waiting).toEqual([
    { kind: "child", entry: "charge", child: "payment/pay-2", until: null },
  ]);
  expect(text(waiting)).toContain('Waits for child run "payment/pay-2" at "charge"');
  const healthy = (await call(client, "diagnose_run", { workflow: "order", key: "o-2" })).structuredContent!;
  expect(healthy).toMatchObject({ category: "healthy", culprit: { path: "charge", kind: "child" } });
  expect(healthy.summary).toContain(
    'The run waits at "charge" for its child run payment/pay-2, which is waiting',
  );
  expect(healthy.nextActions[0]).toMatchObject({
    tool: "get_run",
    args: { workflow: "payment", key: "pay-2" },
  });
  await call(client, "send_message", {
    workflow: "payment",
    key: "pay-2",
    queue: "confirm",
    body: { ok: true },
  });
  await reach("order", "o-2", "completed");
});

test("diagnose_run on a parent whose child failed names the child's culprit step and the calls to fix it there", async () => {
  const { client, reach } = await server();
  await call(client, "start_run", {
    workflow: "order",
    key: "o-9",
    input: { orderId: "9", amount: 20, card: "0000-1" },
  });
  await reach("order", "o-9", "failed");
  const r = await call(client, "diagnose_run", { workflow: "order", key: "o-9" });
  const d = r.structuredContent!;
  expect(d.run).toMatchObject({ workflow: "order", key: "o-9", status: "failed" });
  expect(d.category).toBe("fatal-error");
  expect(d.culprit).toMatchObject({
    path: "charge-card",
    kind: "step",
    run: { workflow: "payment", key: "pay-9" },
  });
  expect(d.chain).toEqual([
    { workflow: "order", key: "o-9", status: "failed", entry: "charge" },
    { workflow: "payment", key: "pay-9", status: "failed" },
  ]);
  expect(d.summary).toContain(
    'Run order/o-9 failed because its child run payment/pay-9 (entry "charge") failed',
  );
  expect(d.summary).toContain("card 0000-1 declined: insufficient funds");
  const calls = d.nextActions.filter((a: { kind: string }) => a.kind === "call");
  expect(calls[0]).toMatchObject({
    tool: "replay_run",
    args: { workflow: "payment", key: "pay-9", dryRun: true },
  });
  expect(calls).toContainEqual(
    expect.objectContaining({
      tool: "replay_run",
      args: { workflow: "order", key: "o-9", fromStep: "charge", dryRun: true },
    }),
  );
  for (const a of calls) {
    const tool = TOOLS.find((t) => t.name === a.tool)!;
    expect(tool).toBeDefined();
  }
  expect(text(r)).toContain("through order/o-9 (failed) → payment/pay-9 (failed)");
});
