// Attach mode: the MCP server has no workflow code and shares the database with an application process
// that runs the engine. Its writes are carried out by that process.

import { type ChildProcess, spawn } from "node:child_process";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, test } from "vitest";
import { attachEngine, Closer, call, connect, ROOT, tempDb, text, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

/** Starts the owner script and resolves once it printed "ready". */
async function startOwner(db: string, ...starts: string[]): Promise<ChildProcess> {
  const child = spawn(process.execPath, ["--import", "tsx", "test/mcp/owner.ts", db, ...starts], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  closer.add(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  );
  let out = "";
  let err = "";
  child.stdout!.on("data", (d) => (out += d));
  child.stderr!.on("data", (d) => (err += d));
  await until(() => out.includes("ready") || child.exitCode !== null, "the owner process to start", 30_000);
  if (child.exitCode !== null) throw new Error(`owner exited: ${err}`);
  return child;
}

test("an approval sent through MCP is consumed by the owning process, which finishes the run", async () => {
  const db = tempDb(closer);
  await startOwner(db, "approval", "inv-1", JSON.stringify({ amount: 250 }), "sleeper", "s-1", "null");
  const engine = await attachEngine(closer, db);
  await until(
    async () => (await engine.store.findRun("approval", "inv-1"))?.status === "waiting",
    "the run to wait",
  );
  const client = await connect(closer, engine);
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
  await client.subscribeResource({ uri: "waymark://runs/approval/inv-1" });

  const run = await call(client, "get_run", { workflow: "approval", key: "inv-1" });
  expect(run.structuredContent!.waiting[0].messageSchema.required).toEqual(["approve", "by"]);

  // Without the code here, the body is still checked against the schema the owner published.
  const bad = await call(client, "send_message", {
    workflow: "approval",
    key: "inv-1",
    queue: "decisions",
    body: { approve: "yes", by: "" },
  });
  expect(bad.isError).toBe(true);
  expect(text(bad)).toContain("INVALID_MESSAGE");
  const badQueue = await call(client, "send_message", {
    workflow: "approval",
    key: "inv-1",
    queue: "decision",
    body: {},
  });
  expect(text(badQueue)).toContain("Its queues are: decisions");

  const sent = await call(client, "send_message", {
    workflow: "approval",
    key: "inv-1",
    queue: "decisions",
    body: { approve: true, by: "ann" },
    idempotencyKey: "inv-1-decision",
  });
  expect(sent.isError).toBeFalsy();
  expect(sent.structuredContent).toMatchObject({
    runWasWaiting: true,
    consumed: true,
    consumedBy: "await-decision",
  });

  const done = await call(client, "wait_for_run", {
    workflow: "approval",
    key: "inv-1",
    until: "finished",
    timeoutSeconds: 30,
  });
  expect(done.structuredContent).toMatchObject({ status: "completed", timedOut: false });
  const final = await call(client, "get_run", { workflow: "approval", key: "inv-1" });
  expect(final.structuredContent!.output).toEqual({ approved: true, by: "ann" });
  await until(() => updates.length > 0, "a resources/updated notification from the other process's progress");

  // A replay is stored as a request and carried out by the owner, which reruns from the chosen entry.
  const dry = await call(client, "replay_run", {
    workflow: "approval",
    key: "inv-1",
    fromStep: "await-decision",
    dryRun: true,
  });
  expect(dry.structuredContent).toMatchObject({ dryRun: true, applied: false, discardCount: 2 });
  expect(dry.structuredContent!.restoreMessages[0].body).toEqual({ approve: true, by: "ann" });
  const replayed = await call(client, "replay_run", {
    workflow: "approval",
    key: "inv-1",
    fromStep: "await-decision",
  });
  expect(replayed.isError).toBeFalsy();
  expect(replayed.structuredContent!.applied || replayed.structuredContent!.requested).toBe(true);
  await until(async () => {
    const row = await engine.store.findRun("approval", "inv-1");
    const history = row ? await engine.history(row.id) : [];
    return row?.status === "completed" && history.some((e) => e.kind === "replay");
  }, "the owner to carry out the replay and finish again");

  // A cancel is requested here and carried out by the owner.
  await until(
    async () => (await engine.store.findRun("sleeper", "s-1"))?.status === "sleeping",
    "the sleeper",
  );
  const cancel = await call(client, "cancel_run", { workflow: "sleeper", key: "s-1" });
  expect(["requested", "cancelled"]).toContain(cancel.structuredContent!.outcome);
  await until(
    async () => (await engine.store.findRun("sleeper", "s-1"))?.status === "cancelled",
    "the cancel",
  );

  // Without the code here, the tools that run it are not offered at all.
  const names = (await client.listTools()).tools.map((t) => t.name);
  expect(names).toContain("send_message");
  expect(names).not.toContain("start_run");
  expect(names).not.toContain("call_action");
});
