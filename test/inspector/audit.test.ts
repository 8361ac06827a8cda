// The inspector's writes in the audit: messages, replay and cancel through its API are recorded with the
// session that made them (a login cookie's label, never the cookie; the bearer token), refusals too.

import { afterEach, expect, test } from "vitest";
import { Closer, startEngine, tempDb, until } from "../mcp/helpers.js";
import { request, serveInspector } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const TOKEN = "audit-token";

test("inspector writes are audited with who made them, refused ones with their error", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "a1", { amount: 10 });
  await until(async () => (await engine.store.findRun("approval", "a1"))?.status === "waiting", "a1 waits");
  const server = await serveInspector(closer, engine, { http: { token: TOKEN } });
  const login = await request(`${server.base}/?token=${TOKEN}`);
  const cookie = String(login.headers["set-cookie"]).split(";")[0]!;
  const api = (path: string, body: unknown, headers: Record<string, string> = { cookie }) =>
    request(`${server.base}/api${path}`, { body, headers: { ...headers, "user-agent": "test-browser/1" } });

  const refused = await api("/runs/approval/a1/messages", { queue: "decisions", body: { approve: "y" } });
  expect(refused.status).toBe(400);
  const sent = await api("/runs/approval/a1/messages", {
    queue: "decisions",
    body: { approve: true, by: "ann" },
  });
  expect(sent.json).toMatchObject({ duplicate: false });
  const missing = await api("/runs/approval/zz/cancel", {}, { authorization: `Bearer ${TOKEN}` });
  expect(missing.status).toBe(404);
  const dry = await api("/runs/approval/a1/replay", { dryRun: true, fromStep: "record-amount" });
  expect(dry.json).toMatchObject({ dryRun: true });

  const { entries } = await engine.audit.list({ surface: "inspector" });
  expect(entries.map((e) => [e.action, e.run?.key, e.outcome.ok ? "ok" : e.outcome.code])).toEqual([
    ["replay_run", "a1", "ok"],
    ["cancel_run", "zz", "RUN_NOT_FOUND"],
    ["send_message", "a1", "ok"],
    ["send_message", "a1", "INVALID_MESSAGE"],
  ]);
  const run = (await engine.store.findRun("approval", "a1"))!;
  expect(entries[2]!.run).toEqual({ workflow: "approval", key: "a1", runId: run.id });
  expect(entries[2]!.args).toEqual({ queue: "decisions", body: { approve: true, by: "ann" } });
  expect(entries[2]!.client).toMatchObject({ name: "test-browser/1", label: "login session" });
  expect(entries[2]!.client.session).toMatch(/^login-[0-9a-f]{12}$/);
  expect(JSON.stringify(entries)).not.toContain(cookie.split("=")[1]!);
  expect(entries[1]!.client).toEqual({ name: "test-browser/1", label: "bearer token" });
  expect(entries[0]!.args).toEqual({ dryRun: true, fromStep: "record-amount" });
});
