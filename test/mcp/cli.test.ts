// `waymark mcp` as a real process: over stdio (spawned by the SDK's stdio client) and over HTTP on port 0.

import { type ChildProcess, spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, test } from "vitest";
import { Closer, call, ROOT, startEngine, stdioClient, tempDb, text, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const CLI = ["--import", "tsx", "src/cli/main.ts", "mcp"];

test("over stdio with a registry: the server runs the workflows itself; logs go to stderr only", async () => {
  const db = tempDb(closer);
  const { client, stderr } = await stdioClient(closer, [
    "--create",
    "--db",
    db,
    "--registry",
    "test/mcp/workflows.ts",
  ]);
  const started = await call(client, "start_run", { workflow: "approval", key: "p-1", input: { amount: 3 } });
  expect(started.structuredContent!.created).toBe(true);
  const waited = await call(client, "wait_for_run", {
    workflow: "approval",
    key: "p-1",
    fromStatus: "pending",
    timeoutSeconds: 20,
  });
  expect(["running", "waiting"]).toContain(waited.structuredContent!.status);
  await until(async () => {
    const r = await call(client, "get_run", { workflow: "approval", key: "p-1" });
    return r.structuredContent!.status === "waiting";
  }, "the run to wait for a decision");
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
  await client.subscribeResource({ uri: "waymark://runs/approval/p-1/state" });
  const sent = await call(client, "send_message", {
    workflow: "approval",
    key: "p-1",
    queue: "decisions",
    body: { approve: true, by: "cli" },
  });
  expect(sent.structuredContent!.consumed).toBe(true);
  await until(() => updates.includes("waymark://runs/approval/p-1/state"), "a resources/updated over stdio");
  expect(stderr()).toContain("running workflows approval, flaky, fixable, sleeper");
});

test("over stdio, what workflow code writes to stdout goes to stderr and the protocol stays clean", async () => {
  const db = tempDb(closer);
  const { client, transport, stderr } = await stdioClient(closer, [
    "--create",
    "--db",
    db,
    "--registry",
    "test/mcp/chatty-registry.ts",
  ]);
  const errors: Error[] = [];
  transport.onerror = (err) => void errors.push(err);
  await call(client, "start_run", { workflow: "chatty", key: "k-1" });
  const done = await call(client, "wait_for_run", {
    workflow: "chatty",
    key: "k-1",
    until: "finished",
    timeoutSeconds: 20,
  });
  expect(done.structuredContent!.status).toBe("completed");
  expect((await client.listTools()).tools.length).toBeGreaterThan(5);
  await until(() => stderr().includes("a raw write to stdout"), "the step's output on stderr");
  expect(stderr()).toContain("chatty registry loading");
  expect(stderr()).toContain("processing k-1");
  expect(errors).toEqual([]);
});

test("over stdio attached beside an application, read-only hides the write tools", async () => {
  const db = tempDb(closer);
  const owner = await startEngine(closer, db);
  await owner.getOrCreate("sleeper", "s-1");
  const { client, stderr } = await stdioClient(closer, ["--db", db, "--read-only"]);
  const names = (await client.listTools()).tools.map((t) => t.name);
  expect(names).not.toContain("send_message");
  expect(names).not.toContain("cancel_run");
  const runs = await call(client, "list_runs", {});
  expect(text(runs)).toContain("sleeper/s-1");
  expect(stderr()).toContain("attached to");
});

test("over HTTP on port 0: prints the bound address to stderr and serves it; refuses 0.0.0.0 without a token", async () => {
  const db = tempDb(closer);
  const child: ChildProcess = spawn(process.execPath, [...CLI, "--http", "0", "--create", "--db", db], {
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
  let stderr = "";
  let stdout = "";
  child.stderr!.on("data", (d) => (stderr += d));
  child.stdout!.on("data", (d) => (stdout += d));
  const url = await until(
    () => /listening on (http:\/\/\S+)/.exec(stderr)?.[1],
    "the listening line",
    30_000,
  );
  expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);
  const client = new Client({ name: "http-cli-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  closer.add(() => client.close());
  expect((await call(client, "list_workflows")).isError).toBeFalsy();
  expect(stdout).toBe("");

  const refused = spawn(process.execPath, [...CLI, "--http", "0.0.0.0:0", "--db", db], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let refusedErr = "";
  refused.stderr!.on("data", (d) => (refusedErr += d));
  const code = await new Promise<number | null>((resolve) => refused.once("exit", resolve));
  expect(code).toBe(2);
  expect(refusedErr).toContain("without a bearer token");
});

test("--session-idle takes minutes above 0 and says so otherwise", async () => {
  const { parseArgs } = await import("../../src/cli/mcp.js");
  const parsed = parseArgs(["--http", "0", "--session-idle", "5"]);
  expect(parsed).not.toBe("help");
  if (parsed !== "help") expect(parsed.sessionIdleMs).toBe(5 * 60_000);
  expect(() => parseArgs(["--session-idle", "soon"])).toThrow(/--session-idle takes a number of minutes/);
  expect(() => parseArgs(["--session-idle", "0"])).toThrow(/above 0/);
  expect(() => parseArgs(["--session-idle"])).toThrow(/needs a value/);
});
