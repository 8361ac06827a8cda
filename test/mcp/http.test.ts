// Streamable HTTP on port 0: sessions, GET stream notifications, DELETE, token, Host/Origin and body guards.

import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, test } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { type HttpOptions, serveHttp } from "../../src/mcp/http.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { Closer, call, startEngine, tempDb, until } from "./helpers.js";
import { httpClient, INIT, raw } from "./http-helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

async function serve(engine: Engine, options: HttpOptions = {}) {
  const handle = await serveHttp(() => createMcpServer(engine), { port: 0, ...options });
  closer.add(() => handle.close());
  return handle;
}

test("two sessions each get their own server; subscriptions notify over the GET stream; DELETE ends a session", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "a1", { amount: 5 });
  await until(async () => (await engine.store.findRun("approval", "a1"))?.status === "waiting", "wait");
  const handle = await serve(engine);
  expect(handle.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/);

  const one = await httpClient(closer, handle.url);
  const two = await httpClient(closer, handle.url);
  expect(one.transport.sessionId).toBeTruthy();
  expect(one.transport.sessionId).not.toBe(two.transport.sessionId);
  expect(handle.sessionCount()).toBe(2);

  const updates: string[] = [];
  two.client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n) => void updates.push(n.params.uri),
  );
  await two.client.subscribeResource({ uri: "waymark://runs/approval/a1" });

  const sent = await call(one.client, "send_message", {
    workflow: "approval",
    key: "a1",
    queue: "decisions",
    body: { approve: false, by: "bob" },
  });
  expect(sent.structuredContent!.consumed).toBe(true);
  await until(() => updates.includes("waymark://runs/approval/a1"), "a notification in the other session");

  await one.transport.terminateSession();
  await until(() => handle.sessionCount() === 1, "the DELETEd session to end");
  const gone = await raw(handle.url, {
    headers: { "mcp-session-id": one.transport.sessionId ?? "x" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
  });
  expect(gone.status).toBe(404);
  const stillThere = await two.client.listTools();
  expect(stillThere.tools.length).toBeGreaterThan(5);
});

test("Host and Origin are checked against DNS rebinding; bodies are limited; requests need a session", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const handle = await serve(engine, { maxBodyBytes: 10_000 });
  const evilHost = await raw(handle.url, { headers: { host: "evil.example:80" }, body: INIT });
  expect(evilHost.status).toBe(403);
  expect(evilHost.body).toContain("Host");
  const evilOrigin = await raw(handle.url, { headers: { origin: "https://evil.example" }, body: INIT });
  expect(evilOrigin.status).toBe(403);
  expect(evilOrigin.body).toContain("Origin");
  const localOrigin = await raw(handle.url, { headers: { origin: "http://localhost:5173" }, body: INIT });
  expect(localOrigin.status).toBe(200);
  const huge = await raw(handle.url, { body: JSON.stringify({ pad: "x".repeat(20_000) }) });
  expect(huge.status).toBe(413);
  const noSession = await raw(handle.url, {
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
  });
  expect(noSession.status).toBe(400);
  const notJson = await raw(handle.url, { body: "{nope" });
  expect(notJson.status).toBe(400);
  const wrongPath = await raw(handle.url.replace("/mcp", "/other"), { body: INIT });
  expect(wrongPath.status).toBe(404);
});

test("a bearer token is required when set, and binding beyond loopback without one is refused", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  await expect(serveHttp(() => createMcpServer(engine), { host: "0.0.0.0", port: 0 })).rejects.toThrow(
    /without a bearer token/,
  );
  const handle = await serve(engine, { token: "s3cret-token" });
  const none = await raw(handle.url, { body: INIT });
  expect(none.status).toBe(401);
  const wrong = await raw(handle.url, { headers: { authorization: "Bearer nope" }, body: INIT });
  expect(wrong.status).toBe(401);
  const { client } = await httpClient(closer, handle.url, "s3cret-token");
  expect((await call(client, "list_workflows")).structuredContent!.workflows).toHaveLength(4);

  const wide = await serve(engine, { host: "0.0.0.0", token: "s3cret-token" });
  const viaLoopback = await httpClient(closer, wide.url.replace("0.0.0.0", "127.0.0.1"), "s3cret-token");
  expect((await viaLoopback.client.listTools()).tools.length).toBeGreaterThan(5);
});

test("a session idle past sessionIdleMs is closed; a connected client's open GET stream keeps its session", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const handle = await serve(engine, { sessionIdleMs: 300 });

  // A client that initialized and went away without DELETE (no stream open): its session is reaped.
  const init = await raw(handle.url, { body: INIT });
  expect(init.status).toBe(200);
  const abandoned = init.sessionId;
  expect(abandoned).toBeTruthy();

  // An SDK client keeps its GET stream open while connected, so its session survives idle periods.
  const live = await httpClient(closer, handle.url);
  expect(handle.sessionCount()).toBe(2);

  await until(() => handle.sessionsReaped() === 1, "the abandoned session to be reaped", 5_000);
  expect(handle.sessionCount()).toBe(1);
  const gone = await raw(handle.url, {
    headers: { "mcp-session-id": abandoned },
    body: JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
  });
  expect(gone.status).toBe(404);
  expect(gone.body).toContain("Initialize a new session");

  await new Promise((r) => setTimeout(r, 900));
  const tools = await live.client.listTools();
  expect(tools.tools.length).toBeGreaterThan(5);
  expect(handle.sessionCount()).toBe(1);

  // Once the client goes (its stream closes), its session is reaped too.
  await live.transport.close();
  await until(() => handle.sessionCount() === 0, "the closed client's session to be reaped", 5_000);
});
