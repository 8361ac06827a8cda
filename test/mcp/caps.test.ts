// Bounded sessions and subscriptions, over real HTTP and a real stdio process: past --max-sessions an
// initialize answers 503 and says so; a session holds at most --max-subscriptions; a URI that names no
// resource (malformed, too long, no such run or entry) is refused and holds nothing.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { McpError, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, test } from "vitest";
import { serveHttp } from "../../src/mcp/http.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { RESOURCE_NOT_FOUND } from "../../src/mcp/subscriptions.js";
import { Closer, call, ROOT, startEngine, tempDb, until } from "./helpers.js";
import { httpClient, INIT, raw } from "./http-helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

async function refusal(request: Promise<unknown>): Promise<McpError> {
  const err = await request.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(McpError);
  return err as McpError;
}

test("past maxSessions an initialize answers 503 with a JSON-RPC error saying so; an ended session frees its place", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const handle = await serveHttp(() => createMcpServer(engine), { port: 0, maxSessions: 2 });
  closer.add(() => handle.close());
  const one = await httpClient(closer, handle.url);
  await httpClient(closer, handle.url);

  const third = await raw(handle.url, { body: INIT });
  expect(third.status).toBe(503);
  expect(third.headers["retry-after"]).toBe("60");
  expect(third.sessionId).toBe("");
  const body = JSON.parse(third.body) as { jsonrpc: string; error: { code: number; message: string } };
  expect(body.jsonrpc).toBe("2.0");
  expect(body.error.code).toBe(-32000);
  expect(body.error.message).toMatch(
    /Too many MCP sessions: this server keeps at most 2 at once \(--max-sessions\)/,
  );
  expect(body.error.message).toContain("DELETE");
  expect(handle.sessionCount()).toBe(2);

  // An SDK client is told the same, and nothing is kept for it.
  const late = new Client({ name: "late", version: "1" });
  await expect(late.connect(new StreamableHTTPClientTransport(new URL(handle.url)))).rejects.toThrow(
    /Too many MCP sessions/,
  );
  expect(handle.sessionCount()).toBe(2);

  // Requests of the open sessions go on; when one ends, a new client gets its place.
  expect((await call(one.client, "list_workflows")).isError).toBeFalsy();
  await one.transport.terminateSession();
  await until(() => handle.sessionCount() === 1, "the DELETEd session to end");
  const again = await raw(handle.url, { body: INIT });
  expect(again.status).toBe(200);
  expect(again.sessionId).toBeTruthy();
});

test("over HTTP, a session holds at most maxSubscriptions, and URIs that name no resource are refused", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "a1", { amount: 5 });
  await until(async () => (await engine.store.findRun("approval", "a1"))?.status === "waiting", "wait");
  const handle = await serveHttp(() => createMcpServer(engine, { maxSubscriptions: 3 }), { port: 0 });
  closer.add(() => handle.close());
  const { client } = await httpClient(closer, handle.url);
  const updates: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updates.push(n.params.uri));
  const run = "waymark://runs/approval/a1";

  // Each refusal says what is wrong; none takes a place.
  const noRun = await refusal(client.subscribeResource({ uri: "waymark://runs/approval/nope" }));
  expect(noRun.code).toBe(RESOURCE_NOT_FOUND);
  expect(noRun.message).toMatch(/There is no run "approval\/nope".*"a1"/);
  const noWorkflow = await refusal(client.subscribeResource({ uri: "waymark://runs/ghost/a1/state" }));
  expect(noWorkflow.code).toBe(RESOURCE_NOT_FOUND);
  expect(noWorkflow.message).toContain('There is no workflow "ghost"');
  const noEntry = await refusal(client.subscribeResource({ uri: `${run}/steps/99` }));
  expect(noEntry.code).toBe(RESOURCE_NOT_FOUND);
  expect(noEntry.message).toContain("has no entry 99. Its root entries are: record-amount, await-decision");
  const malformed = await refusal(client.subscribeResource({ uri: "waymark://runs/approval" }));
  expect(malformed.message).toMatch(
    /not a resource of this server\. Resources here are waymark:\/\/workflows/,
  );
  const long = await refusal(client.subscribeResource({ uri: `${run}/${"x".repeat(5000)}` }));
  expect(long.message).toContain("The resource URI is too long: 5,027 characters, at most 4,096");

  await client.subscribeResource({ uri: run });
  await client.subscribeResource({ uri: `${run}/history` });
  await client.subscribeResource({ uri: `${run}/steps/record-amount` });
  await client.subscribeResource({ uri: run }); // held already: no new place
  const full = await refusal(client.subscribeResource({ uri: "waymark://workflows" }));
  expect(full.message).toContain("This session already holds 3 subscriptions, the most it may. Unsubscribe");
  await client.unsubscribeResource({ uri: `${run}/history` });
  await client.subscribeResource({ uri: "waymark://workflows" });

  // What is held still notifies.
  await call(client, "send_message", {
    workflow: "approval",
    key: "a1",
    queue: "decisions",
    body: { approve: true, by: "ann" },
  });
  await until(() => updates.includes(run) && updates.includes("waymark://workflows"), "notifications");
  expect(updates).not.toContain(`${run}/history`);
});

test("over stdio, --max-subscriptions caps a session and a URI that names nothing is refused", async () => {
  const db = tempDb(closer);
  const owner = await startEngine(closer, db);
  await owner.getOrCreate("sleeper", "s-1");
  await until(async () => (await owner.store.findRun("sleeper", "s-1"))?.status === "sleeping", "sleep");
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "src/cli/main.ts", "mcp", "--stdio", "--db", db, "--max-subscriptions", "2"],
    cwd: ROOT,
    stderr: "pipe",
  });
  const client = new Client({ name: "stdio-caps", version: "1.0.0" });
  await client.connect(transport);
  closer.add(() => client.close());

  const nothing = await refusal(client.subscribeResource({ uri: "waymark://runs/sleeper/s-404" }));
  expect(nothing.code).toBe(RESOURCE_NOT_FOUND);
  expect(nothing.message).toContain('There is no run "sleeper/s-404"');
  await client.subscribeResource({ uri: "waymark://runs/sleeper/s-1" });
  await client.subscribeResource({ uri: "waymark://runs/sleeper/s-1/state" });
  const full = await refusal(client.subscribeResource({ uri: "waymark://workflows" }));
  expect(full.message).toContain("already holds 2 subscriptions");
  expect((await client.listTools()).tools.length).toBeGreaterThan(5);
});
