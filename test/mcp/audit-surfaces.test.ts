// The audit and the inspector links through real MCP clients on real processes: `waymark mcp --http 0` (the
// inspector beside it) and `waymark mcp --stdio`. Writes are recorded with the client's name, version and
// session, list_audit filters them, get_run shows them, the inspector's writes join them; answers about a run
// link to its inspector page over HTTP (a real chromium opens one) and carry no link over stdio.

import { type ChildProcess, spawn } from "node:child_process";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Browser } from "playwright-core";
import { afterEach, expect, test } from "vitest";
import { launchBrowser } from "../browser.js";
import { request } from "../inspector/helpers.js";
import { Closer, call, ROOT, stdioClient, tempDb, text, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const REGISTRY = ["--registry", "test/mcp/workflows.ts"];

async function httpServer(db: string): Promise<string> {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main.ts", "mcp", "--http", "0", "--create", "--db", db, ...REGISTRY],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  closer.add(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  );
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  return until(() => /listening on (http:\/\/\S+)/.exec(stderr)?.[1], "the listening line", 60_000);
}

test("over HTTP: writes audited with client and session, list_audit filters, get_run shows them, links open in chromium", {
  timeout: 180_000,
}, async () => {
  const url = await httpServer(tempDb(closer));
  const base = url.replace(/\/mcp$/, "/");
  const transport = new StreamableHTTPClientTransport(new URL(url));
  const client = new Client({ name: "agent-x", version: "3.1.4" });
  await client.connect(transport);
  closer.add(() => client.close());

  const started = await call(client, "start_run", {
    workflow: "approval",
    key: "a 1/é",
    input: { amount: 7 },
  });
  const runLink = `${base}#/run/approval/${encodeURIComponent("a 1/é")}`;
  expect(started.structuredContent!.inspector).toEqual({ run: runLink });
  expect(text(started)).toContain(`Inspector: ${runLink}`);
  await call(client, "wait_for_run", {
    workflow: "approval",
    key: "a 1/é",
    fromStatus: "pending",
    timeoutSeconds: 30,
  });
  const refused = await call(client, "send_message", {
    workflow: "approval",
    key: "a 1/é",
    queue: "decisions",
    body: { approve: "maybe" },
  });
  expect(refused.isError).toBe(true);
  await call(client, "cancel_run", { workflow: "approval", key: "nope" });
  // The inspector's write, beside MCP's.
  const viaPage = await request(`${base}api/runs/approval/${encodeURIComponent("a 1/é")}/messages`, {
    body: { queue: "decisions", body: { approve: true, by: "ann" } },
    headers: { "user-agent": "test-browser/2" },
  });
  expect(viaPage.status).toBe(200);

  const listed = await call(client, "list_audit", { workflow: "approval", key: "a 1/é" });
  expect(listed.isError).toBeFalsy();
  const entries = listed.structuredContent!.entries as Array<Record<string, any>>;
  expect(entries.map((e) => [e.surface, e.action, e.outcome.ok ? "ok" : e.outcome.code])).toEqual([
    ["inspector", "send_message", "ok"],
    ["mcp", "send_message", "INVALID_MESSAGE"],
    ["mcp", "start_run", "ok"],
  ]);
  expect(entries[1]!.client).toEqual({ name: "agent-x", version: "3.1.4", session: transport.sessionId });
  expect(entries[0]!.client).toMatchObject({ name: "test-browser/2" });
  const onlyMcp = await call(client, "list_audit", { surface: "mcp" });
  expect(onlyMcp.structuredContent!.total).toBe(3); // start, refused send, refused cancel: wait_for_run reads
  const since = await call(client, "list_audit", { since: entries[1]!.at, surface: "mcp" });
  expect((since.structuredContent!.entries as unknown[]).length).toBe(2);
  const byId = await call(client, "list_audit", { runId: entries[0]!.run.runId });
  expect(byId.structuredContent!.total).toBe(3);

  const run = await call(client, "get_run", { workflow: "approval", key: "a 1/é" });
  expect(run.structuredContent!.writes).toMatchObject({
    count: 3,
    latest: [
      { action: "send_message", outcome: "ok" },
      { outcome: "INVALID_MESSAGE" },
      { action: "start_run" },
    ],
    more: 'list_audit {"workflow":"approval","key":"a 1/é"}',
  });
  expect(text(run)).toContain("Writes (audit): 3");
  expect(run.structuredContent!.inspector).toEqual({ run: runLink });

  const step = await call(client, "get_step", { workflow: "approval", key: "a 1/é", step: "record-amount" });
  const entryLink = step.structuredContent!.inspector.entry as string;
  expect(entryLink).toBe(`${runLink}?entry=${step.structuredContent!.id}`);
  const history = await call(client, "get_history", { workflow: "approval", key: "a 1/é" });
  expect(history.structuredContent!.inspector).toEqual({
    run: runLink,
    entryTemplate: `${runLink}?entry={id}`,
  });
  expect((await call(client, "list_workflows")).structuredContent!.inspector).toBeUndefined();

  // The link the answer gave opens that run and that entry in a real browser, its writes listed.
  const browser: Browser = await launchBrowser();
  closer.add(() => browser.close());
  const page = await browser.newPage();
  await page.goto(entryLink);
  await page
    .getByRole("heading", { name: /record-amount/ })
    .first()
    .waitFor({ timeout: 60_000 });
  expect(await page.title()).toBe("approval/a 1/é · Waymark");
  const writes = page.locator("section.writes");
  await writes.getByRole("heading", { name: "Writes (3)" }).waitFor({ timeout: 60_000 });
  expect(await writes.locator("tbody tr").count()).toBe(3);
  expect(await writes.locator("tr.refused .write-outcome").textContent()).toContain("INVALID_MESSAGE");
});

test("over stdio: writes audited with the client's name and version; answers carry no inspector link", {
  timeout: 120_000,
}, async () => {
  const { client } = await stdioClient(closer, ["--create", "--db", tempDb(closer), ...REGISTRY]);
  const started = await call(client, "start_run", { workflow: "sleeper", key: "s-1" });
  expect(started.structuredContent!.inspector).toBeUndefined();
  expect(text(started)).not.toContain("Inspector:");
  await call(client, "cancel_run", { workflow: "sleeper", key: "s-1" });
  const run = await call(client, "get_run", { workflow: "sleeper", key: "s-1" });
  expect(run.structuredContent!.inspector).toBeUndefined();
  expect(run.structuredContent!.writes).toMatchObject({ count: 2 });
  const listed = await call(client, "list_audit", {});
  const entries = listed.structuredContent!.entries as Array<Record<string, any>>;
  expect(entries.map((e) => [e.action, e.outcome.ok])).toEqual([
    ["cancel_run", true],
    ["start_run", true],
  ]);
  for (const e of entries) expect(e.client).toEqual({ name: "waymark-stdio-test", version: "1.0.0" });
  const resource = await client.readResource({ uri: "waymark://audit" });
  const whole = JSON.parse((resource.contents[0] as { text: string }).text);
  expect(whole.total).toBe(2);
  expect(whole.entries.map((e: { action: string }) => e.action)).toEqual(["cancel_run", "start_run"]);
});
