// Resources, templates, completion, subscriptions and prompts through a real SDK client (in-memory pair).

import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, test } from "vitest";
import { Closer, call, connect, startEngine, tempDb, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

async function waitingApproval() {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "order/7", { amount: 99 });
  await until(async () => (await engine.store.findRun("approval", "order/7"))?.status === "waiting", "wait");
  return engine;
}

const json = (r: { contents: unknown[] }) => JSON.parse(String((r.contents[0] as { text?: string }).text));

test("workflows, runs, history, state and steps read as JSON; keys are percent-encoded", async () => {
  const engine = await waitingApproval();
  const client = await connect(closer, engine);
  const { resources } = await client.listResources();
  expect(resources.map((r) => r.uri)).toEqual([
    "waymark://workflows",
    "waymark://audit",
    "waymark://runs/approval/order%2F7",
  ]);
  const { resourceTemplates } = await client.listResourceTemplates();
  expect(resourceTemplates.map((t) => t.uriTemplate).sort()).toEqual([
    "waymark://runs/{workflow}/{key}",
    "waymark://runs/{workflow}/{key}/history",
    "waymark://runs/{workflow}/{key}/state",
    "waymark://runs/{workflow}/{key}/steps/{id}",
  ]);

  expect(json(await client.readResource({ uri: "waymark://workflows" })).workflows).toHaveLength(4);
  const base = "waymark://runs/approval/order%2F7";
  expect(json(await client.readResource({ uri: base })).status).toBe("waiting");
  expect(json(await client.readResource({ uri: `${base}/state` }))).toEqual({ amount: 99, decision: null });
  const history = json(await client.readResource({ uri: `${base}/history` }));
  expect(history.entries.map((e: { path: string }) => e.path)).toEqual(["record-amount", "await-decision"]);
  expect(json(await client.readResource({ uri: `${base}/steps/1` })).stateAfter).toEqual({
    amount: 99,
    decision: null,
  });
  expect(json(await client.readResource({ uri: `${base}/steps/await-decision` })).kind).toBe("queue");
  await expect(client.readResource({ uri: "waymark://runs/approval/nope" })).rejects.toThrow(/order\/7/);
});

test("templates complete workflow names, keys (given the workflow) and entry ids", async () => {
  const engine = await waitingApproval();
  await engine.getOrCreate("approval", "order/8", { amount: 1 });
  const client = await connect(closer, engine);
  const ref = { type: "ref/resource" as const, uri: "waymark://runs/{workflow}/{key}" };
  const wf = await client.complete({ ref, argument: { name: "workflow", value: "ap" } });
  expect(wf.completion.values).toEqual(["approval"]);
  const keys = await client.complete({
    ref,
    argument: { name: "key", value: "order/" },
    context: { arguments: { workflow: "approval" } },
  });
  expect(keys.completion.values.sort()).toEqual(["order/7", "order/8"]);
  const ids = await client.complete({
    ref: { type: "ref/resource", uri: "waymark://runs/{workflow}/{key}/steps/{id}" },
    argument: { name: "id", value: "" },
    context: { arguments: { workflow: "approval", key: "order/7" } },
  });
  expect(ids.completion.values).toEqual(["1", "2"]);
});

test("a subscribed run sends notifications/resources/updated as it moves on, in every session", async () => {
  const engine = await waitingApproval();
  const a = await connect(closer, engine);
  const b = await connect(closer, engine);
  const seen: Record<string, string[]> = { a: [], b: [] };
  a.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.a!.push(n.params.uri));
  b.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void seen.b!.push(n.params.uri));
  const uri = "waymark://runs/approval/order%2F7";
  await a.subscribeResource({ uri });
  await b.subscribeResource({ uri: `${uri}/history` });
  await b.subscribeResource({ uri: "waymark://workflows" });
  await call(a, "send_message", {
    workflow: "approval",
    key: "order/7",
    queue: "decisions",
    body: { approve: true, by: "ann" },
  });
  await until(
    async () => (await engine.store.findRun("approval", "order/7"))?.status === "completed",
    "done",
  );
  await until(() => seen.a!.includes(uri), "session a's notification");
  await until(() => seen.b!.includes(`${uri}/history`), "session b's history notification");
  await until(() => seen.b!.includes("waymark://workflows"), "session b's workflows notification");

  await a.unsubscribeResource({ uri });
  const before = seen.a!.length;
  await engine.getOrCreate("approval", "order/9", { amount: 2 });
  await until(async () => (await engine.store.findRun("approval", "order/9"))?.status === "waiting", "wait");
  expect(seen.a!.length).toBe(before);
  // A URI that names nothing of ours is refused, and says what can be subscribed to.
  await expect(a.subscribeResource({ uri: "https://example.com/x" })).rejects.toThrow(
    /not a resource of this server.*waymark:\/\/runs\/\{workflow\}\/\{key\}/,
  );
});

test("prompts: diagnose a failed run and review pending approvals, with argument completion", async () => {
  const engine = await waitingApproval();
  await engine.getOrCreate("flaky", "f-1");
  await until(async () => (await engine.store.findRun("flaky", "f-1"))?.status === "failed", "fail");
  const client = await connect(closer, engine);
  const { prompts } = await client.listPrompts();
  expect(prompts.map((p) => p.name)).toEqual(["diagnose_failed_run", "review_pending_approvals"]);

  const wf = await client.complete({
    ref: { type: "ref/prompt", name: "diagnose_failed_run" },
    argument: { name: "workflow", value: "" },
  });
  expect(wf.completion.values).toEqual(["flaky"]);
  const key = await client.complete({
    ref: { type: "ref/prompt", name: "diagnose_failed_run" },
    argument: { name: "key", value: "f" },
    context: { arguments: { workflow: "flaky" } },
  });
  expect(key.completion.values).toEqual(["f-1"]);

  const diagnose = await client.getPrompt({
    name: "diagnose_failed_run",
    arguments: { workflow: "flaky", key: "f-1" },
  });
  const dtext = (diagnose.messages[0]!.content as { text: string }).text;
  expect(dtext).toContain('The latest failed entry is "charge"');
  expect(dtext).toContain("card declined");
  expect(dtext).toContain("replay_run");

  const review = await client.getPrompt({ name: "review_pending_approvals", arguments: {} });
  const rtext = (review.messages[0]!.content as { text: string }).text;
  expect(rtext).toContain("approval/order/7");
  expect(rtext).toContain('"approve"');
  expect(rtext).toContain("idempotencyKey");
});
