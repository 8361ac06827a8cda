// The MCP Apps views in real Chromium: `waymark demo` as a child process (HTTP on a free port), the test host
// (src/mcp/apps/host.ts: a page built on the package's AppBridge, a real MCP client over HTTP), and the
// views rendered in its sandboxed iframe (and, for waits on several queues, an in-process server of its own). review_approvals draws the demo's waiting approval; Approve sends
// the message through the bridge and the card shows the run completed; get_run of the failed invoice draws
// its diagnosis. The same against `waymark mcp --read-only` on the demo's database shows no buttons, and a
// hostile run key renders as text. Screenshots go to test-artifacts/mcp-apps/. Steps wait for what the page
// shows, never for a time.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, FrameLocator, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Engine } from "../../../src/engine/engine.js";
import { type AppsHost, startAppsHost } from "../../../src/mcp/apps/host.js";
import { type HttpHandle, serveHttp } from "../../../src/mcp/http.js";
import { createMcpServer } from "../../../src/mcp/server.js";
import { launchBrowser } from "../../browser.js";
import { ROOT, removeDemoWorkspace } from "../helpers.js";
import { multiQueueRegistry, seedMultiQueue } from "./multi-queue.js";

const ARTIFACTS = path.join(ROOT, "test-artifacts", "mcp-apps");
const STEP_MS = 90_000;
const HOSTILE = "<img src=x onerror=window.__pwned=1>";
const temp = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-apps-browser-"));
const db = path.join(temp, "demo.db");
const children: Array<{ child: ChildProcess; exited: Promise<number | null> }> = [];
const hosts: AppsHost[] = [];
/** In-process servers (the multi-queue test's engine and its MCP over HTTP), closed last. */
const closers: Array<() => Promise<unknown>> = [];
let browser: Browser;

/** Spawns `waymark <args>` and resolves the first match of `pattern` in what it prints. */
function spawnWaymark(args: string[], pattern: RegExp): Promise<string> {
  const tsx = path.join(ROOT, "node_modules/.bin/tsx");
  const child = spawn(tsx, ["src/cli/main.ts", ...args], { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  children.push({ child, exited });
  let out = "";
  return new Promise<string>((resolve, reject) => {
    const read = (d: Buffer) => {
      out += d;
      const found = pattern.exec(out)?.[1];
      if (found) resolve(found);
    };
    child.stdout!.on("data", read);
    child.stderr!.on("data", read);
    void exited.then((code) => reject(new Error(`waymark ${args[0]} exited (${code}) first:\n${out}`)));
  });
}

async function openHost(mcpUrl: string): Promise<Page> {
  const host = await startAppsHost({ url: mcpUrl });
  hosts.push(host);
  const page = await browser.newPage({ viewport: { width: 1000, height: 1200 } });
  page.setDefaultTimeout(30_000);
  await page.goto(host.url);
  await page.locator("#status", { hasText: "connected" }).waitFor();
  return page;
}

/** Calls a tool from the host page as a person would; resolves the frame of its view once it is ready. */
async function callInHost(page: Page, tool: string, args: unknown, width = "400"): Promise<FrameLocator> {
  await page.selectOption("#width", width);
  await page.selectOption("#tool", tool);
  await page.fill("#args", JSON.stringify(args));
  await page.click("#call");
  await page.locator("#status", { hasText: `${tool}: view ready` }).waitFor();
  return page.frameLocator("#frame iframe");
}

async function shot(page: Page, name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

let writable: Page;
let readOnly: Page;

beforeAll(async () => {
  const mcpUrl = await spawnWaymark(["demo", "--db", db, "--port", "0"], /MCP over HTTP: (http:\/\/\S+)/);
  browser = await launchBrowser();
  writable = await openHost(mcpUrl);
}, 180_000);

afterAll(async () => {
  for (const host of hosts) await host.close().catch(() => {});
  for (const close of closers.reverse()) await close().catch(() => {});
  await browser?.close();
  for (const { child, exited } of children) {
    if (child.exitCode === null) child.kill("SIGTERM");
    await exited;
  }
  await removeDemoWorkspace(db);
  fs.rmSync(temp, { recursive: true, force: true });
}, 60_000);

describe("MCP Apps views through a real host page, on the demo", () => {
  test(
    "review_approvals draws the waiting approval; Approve sends it through the bridge and the run completes",
    async () => {
      const frame = await callInHost(writable, "review_approvals", {});
      const card = frame.locator('.approval[data-run="approval/expense-42"]');
      await card.waitFor();
      expect(await card.locator(".badge").textContent()).toBe("waiting");
      await shot(writable, "approvals-400px");
      await card.locator('[data-field="by"]').fill("ann");
      await card.getByRole("button", { name: "Approve" }).click();
      await card.locator(".badge", { hasText: "completed" }).waitFor();
      expect(await card.locator(".app-notice").textContent()).toContain("The run is completed.");
      await shot(writable, "approvals-approved");
      // The message went through the server's send_message: the run's own view shows the decision.
      const run = await callInHost(writable, "get_run", { workflow: "approval", key: "expense-42" }, "800");
      await run.locator(".run-status .badge", { hasText: "completed" }).waitFor();
      await run.locator(".timeline", { hasText: "approve" }).waitFor();
    },
    STEP_MS,
  );

  test(
    "get_run of the failed invoice draws its diagnosis, timeline and the replay's dry run first; the theme follows the host",
    async () => {
      const frame = await callInHost(writable, "get_run", { workflow: "invoiceActor", key: "tax-outage" });
      const diagnosis = frame.locator("section.diagnosis");
      await diagnosis.locator(".diag-summary").waitFor();
      expect(await diagnosis.locator(".pill").first().textContent()).toBe("step-failed");
      expect(await diagnosis.textContent()).toContain("calculate-tax");
      await frame.locator(".run-status .badge", { hasText: "failed" }).waitFor();
      await shot(writable, "failed-invoice-400px");
      await writable.selectOption("#theme", "dark");
      await frame.locator("html[data-theme='dark']").waitFor({ state: "attached" });
      await shot(writable, "failed-invoice-dark");
      await frame.getByRole("button", { name: "Replay…", exact: true }).click();
      const preview = frame.locator(".app-confirm");
      await preview.locator(".plan").waitFor();
      expect(await preview.textContent()).toContain("calculate-tax");
      await preview.getByRole("button", { name: "Don't replay" }).click();
      await preview.waitFor({ state: "detached" });
      await writable.selectOption("#theme", "light");
      const diagnosed = await callInHost(writable, "diagnose_run", {
        workflow: "invoiceActor",
        key: "tax-outage",
      });
      await diagnosed.locator("section.diagnosis .diag-summary").waitFor();
    },
    STEP_MS,
  );

  test(
    "a hostile run key renders as text, in the approvals view and the run view",
    async () => {
      await writable.selectOption("#tool", "start_run");
      await writable.fill(
        "#args",
        JSON.stringify({ workflow: "approval", key: HOSTILE, input: { amount: 5 } }),
      );
      await writable.click("#call");
      await writable.locator("#answer", { hasText: "approval" }).waitFor();
      const frame = await callInHost(writable, "review_approvals", { workflow: "approval" });
      const card = frame.locator(`.approval[data-run="approval/${HOSTILE}"]`);
      await card.waitFor();
      expect(await card.locator(".key").textContent()).toBe(HOSTILE);
      expect(await frame.locator("img").count()).toBe(0);
      const run = await callInHost(writable, "get_run", { workflow: "approval", key: HOSTILE });
      await run.locator(".run-head .key", { hasText: HOSTILE }).waitFor();
      expect(await run.locator("img").count()).toBe(0);
      expect(
        await run.locator("html").evaluate(() => (globalThis as { __pwned?: number }).__pwned),
      ).toBeUndefined();
      await shot(writable, "hostile-key");
    },
    STEP_MS,
  );

  test(
    "against waymark mcp --read-only on the demo's database the views show no action buttons",
    async () => {
      const url = await spawnWaymark(
        ["mcp", "--http", "127.0.0.1:0", "--db", db, "--read-only"],
        /listening on (http:\/\/\S+)/,
      );
      readOnly = await openHost(url);
      const frame = await callInHost(readOnly, "review_approvals", { workflow: "approval" });
      const card = frame.locator(`.approval[data-run="approval/${HOSTILE}"]`);
      await card.waitFor();
      expect(await card.textContent()).toContain("read-only");
      expect(await frame.locator("button").count()).toBe(0);
      const run = await callInHost(readOnly, "get_run", { workflow: "invoiceActor", key: "tax-outage" });
      await run.locator("section.diagnosis .diag-summary").waitFor();
      await run.locator(".run-head", { hasText: "read-only" }).waitFor();
      for (const name of [/Replay/, /Cancel/, /Approve/, /Send/]) {
        expect(await run.getByRole("button", { name }).count()).toBe(0);
      }
      expect(await run.locator("form").count()).toBe(0);
      await shot(readOnly, "read-only");
    },
    STEP_MS,
  );
  test(
    "at 400 px a run whose error is one unbroken 30 000-character word stays 400 px wide (diagnosis wraps)",
    async () => {
      await writable.selectOption("#tool", "start_run");
      const card = `0000${"E".repeat(30_000)}`;
      await writable.fill(
        "#args",
        JSON.stringify({ workflow: "payment", key: "long-error", input: { amount: 5, card } }),
      );
      await writable.click("#call");
      await writable.locator("#answer", { hasText: "payment" }).waitFor();
      await writable.selectOption("#tool", "wait_for_run");
      const args = { workflow: "payment", key: "long-error", until: "finished", timeoutSeconds: 30 };
      await writable.fill("#args", JSON.stringify(args));
      await writable.click("#call");
      await writable.locator("#answer", { hasText: "failed" }).waitFor();
      const frame = await callInHost(writable, "get_run", { workflow: "payment", key: "long-error" });
      await frame.locator("section.diagnosis .diag-summary").waitFor();
      await frame.locator(".evidence li").first().waitFor();
      const width = await frame.locator("html").evaluate((el) => el.scrollWidth);
      expect(width).toBeLessThanOrEqual(400);
      await shot(writable, "long-error-400px");
    },
    STEP_MS,
  );

  test(
    "the host's style variables (spec names) restyle the view: text colour, panel background, font",
    async () => {
      await writable.selectOption("#styles", "sample");
      const frame = await callInHost(writable, "get_run", { workflow: "approval", key: "expense-42" });
      const panel = frame.locator(".panel").first();
      await panel.waitFor();
      const seen = await panel.evaluate((el) => {
        // (The tests' tsconfig has no DOM globals: the page's own getComputedStyle, typed here.)
        type Computed = { color: string; fontFamily: string; backgroundColor: string };
        const computed = (globalThis as unknown as { getComputedStyle(e: unknown): Computed })
          .getComputedStyle;
        const body = computed(el.ownerDocument.body);
        return { color: body.color, font: body.fontFamily, panel: computed(el).backgroundColor };
      });
      expect(seen).toEqual({ color: "rgb(40, 20, 90)", font: "Georgia, serif", panel: "rgb(255, 248, 231)" });
      await shot(writable, "host-styles");
      await writable.selectOption("#styles", "none");
    },
    STEP_MS,
  );

  test(
    "a run waiting on approve or reject is one card with a form per queue; Send to reject from the view completes it",
    async () => {
      const engine = (await multiQueueRegistry.start({
        database: path.join(temp, "multi.db"),
      })) as unknown as Engine;
      closers.push(() => engine.close());
      await seedMultiQueue(engine);
      const http: HttpHandle = await serveHttp(() => createMcpServer(engine), { port: 0 });
      closers.push(() => http.close());
      const page = await openHost(http.url);
      const frame = await callInHost(page, "review_approvals", {}, "800");
      const card = frame.locator('.approval[data-run="expense/e-1"]');
      await card.waitFor();
      expect(await frame.locator('.approval[data-run="expense/e-1"]').count()).toBe(1);
      expect(await card.locator(".wait-on").textContent()).toContain("approve or reject");
      const approve = card.locator('form.message-form[data-queue="approve"]');
      const reject = card.locator('form.message-form[data-queue="reject"]');
      await approve.waitFor();
      await reject.waitFor();
      expect(await card.locator(".wait-queue h3").allTextContents()).toEqual(["On approve", "On reject"]);
      // Each form is built from its own queue's schema.
      expect(await reject.locator('input[data-field="reason"]').count()).toBe(1);
      expect(await approve.locator('input[data-field="reason"]').count()).toBe(0);
      // The batch says how many of its messages have come.
      const batch = frame.locator('.approval[data-run="collect/c-1"]');
      expect(await batch.locator(".wait-on").textContent()).toContain("1 of 3 arrived");
      // The text answer names the one wait with both queues.
      expect(await page.locator("#answer").textContent()).toContain(
        'expense/e-1 waits in "decide" for a message on "approve" or "reject"',
      );
      await shot(page, "approvals-two-queues");
      await reject.locator('input[data-field="by"]').fill("bob");
      await reject.locator('input[data-field="reason"]').fill("duplicate");
      await reject.getByRole("button", { name: "Send to reject" }).click();
      await card.locator(".badge", { hasText: "completed" }).waitFor();
      expect(await card.locator(".app-notice").textContent()).toContain("The run is completed.");
      expect(await card.locator("form").count()).toBe(0);
      // The message went on "reject" (the view sent it there, not to the wait's first queue).
      const info = await (await engine.get("expense", "e-1")).info();
      expect(info).toMatchObject({ status: "completed", output: "rejected 120 by bob: duplicate" });
      await shot(page, "approvals-two-queues-rejected");
      // One more item for the batch: it still lacks one, so the card counts it and keeps its form.
      await batch.locator('input[data-field="name"]').fill("b");
      await batch.getByRole("button", { name: "Send to items" }).click();
      await batch.locator(".wait-on", { hasText: "2 of 3 arrived" }).waitFor();
      expect(await batch.locator(".message-form").textContent()).toContain("2 of 3 arrived.");
      expect(await batch.locator(".badge").textContent()).toBe("waiting");
    },
    STEP_MS,
  );

  // Last: it replays the demo's failed invoice, which the tests above read as failed.
  test(
    "Replay now with the failed entry selected reads the run again without it: no ENTRY_NOT_FOUND, the run's new header",
    async () => {
      const frame = await callInHost(writable, "get_run", { workflow: "invoiceActor", key: "tax-outage" });
      await frame.locator("section.diagnosis .diag-summary").waitFor();
      await frame.locator(".tl-main.selected").waitFor();
      const marks = await frame.locator(".tl-mark.tl-replay").count();
      await frame.getByRole("button", { name: "Replay…", exact: true }).click();
      await frame.locator(".app-confirm .plan").waitFor();
      await frame.getByRole("button", { name: "Replay now" }).click();
      const notice = frame.locator(".app-notice");
      await notice.waitFor();
      expect(await notice.getAttribute("class")).not.toContain("error");
      expect(await frame.locator(".app-view").textContent()).not.toContain("ENTRY_NOT_FOUND");
      // The run drawn is the one read after the replay (its timeline has one more replay marker).
      await frame.locator(".tl-mark.tl-replay").nth(marks).waitFor({ state: "attached" });
      await shot(writable, "replayed-invoice");
    },
    STEP_MS,
  );
});
