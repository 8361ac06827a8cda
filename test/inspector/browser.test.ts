// The inspector in a real browser (found by test/browser.ts), headless, driven by playwright-core, against the demo
// as `npm start` runs it (a child process on a temp database, serving on a free port). The steps follow
// what a person does: find the failed invoice, read why it failed, approve the waiting approval and watch
// it finish without reloading, replay the failed invoice now that the demo's tax API works again.
// Screenshots go to test-artifacts/inspector/. No step waits for a time: each waits for the page to show
// something.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { attach, setup, workflow } from "../../src/index.js";
import { launchPersistentBrowser } from "../browser.js";
import { Closer, ROOT, removeDemoWorkspace } from "../mcp/helpers.js";
import { serveInspector } from "./helpers.js";

const ARTIFACTS = path.join(ROOT, "test-artifacts", "inspector");
const STEP_MS = 60_000;
const ROWS = ".runs-list tbody tr";

let demo: ChildProcess;
let demoExited: Promise<number | null>;
let base = "";
let context: BrowserContext;
let page: Page;
const temp = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-inspector-browser-"));

/** Starts `waymark demo` as npm start does, on a temp database and a free port; resolves the inspector URL. */
async function startDemo(): Promise<string> {
  const tsx = path.join(ROOT, "node_modules/.bin/tsx");
  demo = spawn(tsx, ["src/cli/main.ts", "demo", "--db", path.join(temp, "demo.db"), "--port", "0"], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  demoExited = new Promise((resolve) => demo.on("exit", (code) => resolve(code)));
  let out = "";
  let err = "";
  demo.stderr!.on("data", (d: Buffer) => (err += d));
  return new Promise<string>((resolve, reject) => {
    demo.stdout!.on("data", (d: Buffer) => {
      out += d;
      const url = /Run inspector: (http:\/\/\S+)/.exec(out)?.[1];
      if (url && out.includes("Press Ctrl+C to stop.")) resolve(url);
    });
    void demoExited.then((code) =>
      reject(new Error(`the demo exited (${code}) before serving: ${err}\n${out}`)),
    );
  });
}

async function shot(name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** Waits until the runs table shows exactly `n` rows (locators only: the page's CSP forbids eval). */
async function rowsAre(n: number): Promise<void> {
  await page
    .locator(ROWS)
    .nth(n - 1)
    .waitFor();
  await page.locator(ROWS).nth(n).waitFor({ state: "detached" });
}

/** The run view's status badge text. */
function runStatus(): Promise<string | null> {
  return page.locator(".run-status .badge").textContent();
}

async function waitForRunStatus(status: string): Promise<void> {
  await page.locator(".run-status .badge", { hasText: status }).waitFor();
}

beforeAll(async () => {
  base = await startDemo();
  context = await launchPersistentBrowser(path.join(temp, "profile"), {
    viewport: { width: 1400, height: 1000 },
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30_000);
}, 120_000);

afterAll(async () => {
  await context?.close();
  if (demo && demo.exitCode === null) {
    demo.kill("SIGTERM");
    await demoExited;
  }
  await removeDemoWorkspace(path.join(temp, "demo.db"));
  fs.rmSync(temp, { recursive: true, force: true });
}, 60_000);

describe("the run inspector in chromium, on the demo", () => {
  test(
    "lists the demo's runs with counts by status, and finds the failed invoice by status and by error text",
    async () => {
      await page.goto(base);
      await page.locator(`${ROWS}[data-key="tax-outage"]`).waitFor();
      const all = Number(await page.locator('.count[data-status="all"] .count-n').textContent());
      const failed = Number(await page.locator('.count[data-status="failed"] .count-n').textContent());
      expect(all).toBeGreaterThanOrEqual(6); // the demo's six sample runs, and its failure scenarios
      expect(failed).toBeGreaterThanOrEqual(1);
      await rowsAre(Math.min(all, 25));
      await page.locator("#live[data-state='live']").waitFor();
      // The demo's schedule, upcoming: its next firing as a time, never fired yet.
      const nightly = page.locator('.schedules tr[data-schedule="nightly"]');
      await nightly.waitFor();
      expect(await nightly.locator("td").nth(1).textContent()).toBe("nightlyReport");
      expect(await nightly.locator("td").nth(2).textContent()).toBe("cron 0 3 * * * (Europe/Berlin)");
      expect(await nightly.locator(".schedule-next time").getAttribute("datetime")).toMatch(
        /T0[12]:00:00\.000Z$/,
      );
      expect(await nightly.locator(".schedule-last").textContent()).toBe("never fired");
      await shot("runs-list");

      await page.locator('.count[data-status="failed"]').click();
      await rowsAre(failed);
      for (const status of await page
        .locator(ROWS)
        .evaluateAll((rows) => rows.map((r) => r.getAttribute("data-status")))) {
        expect(status).toBe("failed");
      }
      await page.locator(`${ROWS}[data-key="tax-outage"]`).waitFor();

      // The same run by its error text, typed with the keyboard ("/" jumps to the filters).
      await page.goto(`${base}#/`);
      await rowsAre(Math.min(all, 25));
      await page.locator("body").press("/");
      await page.keyboard.press("Tab"); // status
      await page.keyboard.press("Tab"); // key
      await page.keyboard.press("Tab"); // error text
      await page.keyboard.type("tax quote failed");
      await page.keyboard.press("Enter");
      await rowsAre(1);
      expect(await page.locator(ROWS).getAttribute("data-key")).toBe("tax-outage");
      expect(page.url()).toContain("error=tax+quote+failed");
    },
    STEP_MS,
  );

  test(
    "the failed invoice shows its failing step on the timeline, every attempt, and the error with its stack",
    async () => {
      await page.locator(".runs-list a.run-link", { hasText: "tax-outage" }).click();
      await waitForRunStatus("failed");
      const failing = page.locator('.tl-main[data-path="calculate-tax"]');
      expect(await failing.getAttribute("data-status")).toBe("failed");
      expect(await page.locator(".tl-main[data-path='calculate-tax'] .tl-attempt.at-failed").count()).toBe(4);
      expect(await page.locator('.tl-main[data-path="load-subtotal"]').getAttribute("data-status")).toBe(
        "completed",
      );
      // The failed step is chosen at once: its error, stack and attempts are in the entry panel.
      await page.locator(".entry .entry-title", { hasText: "calculate-tax" }).waitFor();
      const entry = page.locator("section.entry");
      expect(await entry.locator(".error-text").first().textContent()).toContain("tax quote failed: 503");
      expect(await entry.locator("pre.stack").first().textContent()).toContain("at ");
      expect(await entry.locator("table.attempts tbody tr").count()).toBe(4);
      expect(await page.locator(".run-error").textContent()).toContain("tax quote failed: 503");
      // The diagnosis (diagnose_run's) sits on top and points at the same step.
      const diagnosis = page.locator(".diagnosis .diag");
      await diagnosis.waitFor();
      expect(await diagnosis.locator(".diag-head").textContent()).toContain("calculate-tax");
      await shot("failed-run");
    },
    STEP_MS,
  );

  test(
    "approving the waiting approval with the form built from its queue's schema completes it, without a reload",
    async () => {
      await page.goto(`${base}#/?status=waiting`);
      await page.locator(".runs-list a.run-link", { hasText: "expense-42" }).click();
      await waitForRunStatus("waiting");
      await page.evaluate("window.stayedOnPage = true");
      const form = page.locator('form.message-form[data-queue="decisions"]');
      await form.locator('input[data-field="by"]').fill("inspector-test");
      expect(await form.locator("button", { hasText: "Approve" }).count()).toBe(1);
      await shot("approval-waiting");

      await form.locator("button", { hasText: "Approve" }).click();
      await waitForRunStatus("completed");
      await page.locator('.tl-main[data-path="approve"][data-status="completed"]').waitFor();
      expect(await page.locator('.tl-main[data-path="await-decision"]').getAttribute("data-status")).toBe(
        "completed",
      );
      await page.locator(".waiting").waitFor({ state: "hidden" });
      // Same document all along: the page moved on from the server's events, not from a reload.
      expect(await page.evaluate("window.stayedOnPage")).toBe(true);
      await page.locator('.tl-main[data-path="approve"]').click();
      await page.locator(".entry .entry-title", { hasText: "approve" }).waitFor();
      expect(await page.locator(".state-diff table.diff").textContent()).toContain("inspector-test");
      await shot("approval-completed");
    },
    STEP_MS,
  );

  test(
    "a change made elsewhere shows up live: cancelling the sleeping reminder through the API moves the open page",
    async () => {
      await page.goto(`${base}#/run/reminder/renewal`);
      await waitForRunStatus("sleeping");
      await page.locator(".waiting h3", { hasText: "Sleeping in" }).waitFor();
      await page.evaluate("window.stayedOnPage = true");
      await shot("live-run");
      const res = await fetch(`${base}api/runs/reminder/renewal/cancel`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{}",
      });
      expect(res.status).toBe(200);
      await waitForRunStatus("cancelled");
      await page.locator('.tl-main[data-path="wait-a-day"][data-status="cancelled"]').waitFor();
      expect(await page.evaluate("window.stayedOnPage")).toBe(true);
    },
    STEP_MS,
  );

  test(
    "the failed invoice replays after the demo's fix: the dry run is shown first, then it completes live",
    async () => {
      await page.goto(`${base}#/run/invoiceActor/tax-outage`);
      await waitForRunStatus("failed");
      await page.locator(".run-head button", { hasText: "Replay" }).click();
      const dialog = page.locator("dialog[open]");
      await dialog.waitFor();
      expect(await dialog.locator("h2").textContent()).toContain("from calculate-tax");
      expect(await dialog.locator(".discard").textContent()).toContain("calculate-tax");
      expect(await runStatus()).toBe("failed"); // the dry run changed nothing
      await shot("replay-preview");

      // Focus starts on the choice that changes nothing, so Enter does not replay by accident.
      expect(await page.evaluate("document.activeElement.textContent")).toBe("Don't replay");
      await dialog.locator("button", { hasText: "Replay now" }).click();
      await waitForRunStatus("completed");
      await page.locator('.tl-main[data-path="save-invoice"][data-status="completed"]').waitFor();
      expect(await page.locator('.tl-main[data-path="calculate-tax"]').getAttribute("data-status")).toBe(
        "completed",
      );
      expect(await page.locator(".tl-mark.tl-replay").count()).toBe(1);
      expect(await page.locator(".run-error").isHidden()).toBe(true);
      await shot("replayed-run");
    },
    STEP_MS,
  );

  test(
    "keyboard only: a run opens with Enter, arrow keys walk the timeline; the dark theme reads as well",
    async () => {
      await page.emulateMedia({ colorScheme: "dark" });
      await page.goto(`${base}#/?workflow=fanOut`);
      await rowsAre(1);
      await page.locator(".runs-list a.run-link").focus();
      await page.keyboard.press("Enter");
      await waitForRunStatus("completed");
      await page.locator(".tl-main").first().focus(); // the join
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("Enter");
      await page.locator(".entry .entry-title", { hasText: "notify[email]/send-email" }).waitFor();
      await page.keyboard.press("ArrowDown");
      await page.keyboard.press("Enter");
      await page.locator(".entry .entry-title", { hasText: "notify[sms]/send-sms" }).waitFor();
      expect(await page.locator(".entry table.attempts tbody tr").count()).toBe(2);
      await page.keyboard.press("ArrowRight"); // into the entry panel
      expect(await page.evaluate('document.activeElement.classList.contains("entry-title")')).toBe(true);
      const background = await page.evaluate("getComputedStyle(document.body).backgroundColor");
      expect(background).not.toBe("rgb(246, 247, 249)"); // the light background
      await shot("dark-fan-out");
      await page.emulateMedia({ colorScheme: "light" });
    },
    STEP_MS,
  );

  test(
    "a long history: only the rows in view are drawn, End and the arrow keys reach every entry, and the cut is said",
    async () => {
      const closer = new Closer();
      try {
        // 10,005 steps, then a sleep: more entries than a timeline gets, on a live (sleeping) run.
        const long = workflow({
          run: async (ctx, input: { n: number }) => {
            for (let i = 0; i < input.n; i++) await ctx.step(`s${i}`, () => i);
            await ctx.sleep("nap", "1h");
          },
        });
        const engine = (await setup({ use: { long } }).start({
          database: path.join(temp, "long.db"),
        })) as unknown as Engine;
        closer.add(() => engine.close());
        const run = await engine.getOrCreate("long", "l1", { n: 10_005 });
        while ((await run.status()) !== "sleeping") await new Promise((r) => setTimeout(r, 50));
        const server = await serveInspector(closer, engine);

        await page.goto(`${server.base}/#/run/long/l1`);
        await page.locator('.tl-main[data-path="s0"]').waitFor();
        expect(await page.locator(".timeline-panel p.muted").textContent()).toContain(
          "The first 10,000 entries are drawn",
        );
        expect(await page.locator(".tl-main").count()).toBeLessThan(200);

        await page.locator('.tl-main[data-path="s0"]').focus();
        await page.keyboard.press("End");
        await page.locator('.tl-main[data-path="s9999"]').waitFor();
        expect(await page.evaluate("document.activeElement.dataset.path")).toBe("s9999");
        await page.keyboard.press("ArrowUp");
        expect(await page.evaluate("document.activeElement.dataset.path")).toBe("s9998");
        await page.keyboard.press("Enter");
        await page.locator(".entry .entry-title", { hasText: "s9998" }).waitFor();
        // The live run redraws every few seconds; the reader keeps their place.
        expect(await page.locator(".tl-main").count()).toBeLessThan(200);
        await page.locator('.tl-main.selected[data-path="s9998"]').waitFor();
        await page.keyboard.press("Home");
        expect(await page.evaluate("document.activeElement.dataset.path")).toBe("s0");
        await shot("long-history");
      } finally {
        await closer.closeAll();
      }
    },
    STEP_MS,
  );

  test(
    "a child run links back to its parent, and the parent's ctx.child entry and wait link to the child",
    async () => {
      await page.goto(`${base}#/run/payment/pay-42`);
      await waitForRunStatus("waiting");
      await page.locator(".crumbs a.parent-link", { hasText: "order/order-42" }).click();
      await page.locator(".run-head", { hasText: "order-42" }).waitFor();
      await waitForRunStatus("waiting");
      await page.locator(".waiting a.child-link", { hasText: "payment/pay-42" }).waitFor();
      await page.locator('.tl-main[data-path="charge"]').click();
      await page.locator(".entry .entry-title", { hasText: "charge" }).waitFor();
      await shot("child-entry");
      await page.locator(".entry a.child-link", { hasText: "payment/pay-42" }).click();
      await page.locator(".run-head", { hasText: "pay-42" }).waitFor();
      await page.locator(".crumbs a.parent-link", { hasText: "order/order-42" }).waitFor();
    },
    STEP_MS,
  );

  test(
    "read-only: a second server on the same database shows the runs but no form, replay or cancel",
    async () => {
      const closer = new Closer();
      try {
        const engine = (await attach({ database: path.join(temp, "demo.db") })) as unknown as Engine;
        closer.add(() => engine.close());
        const server = await serveInspector(closer, engine, { inspector: { readOnly: true } });
        await page.goto(`${server.base}/#/run/invoiceActor/paid`);
        await waitForRunStatus("completed");
        expect(await page.locator("#mode").textContent()).toContain("read-only");
        expect(await page.locator(".run-head").textContent()).toContain("read-only");
        expect(await page.locator(".run-head button").count()).toBe(0);
        await page.locator('.tl-main[data-path="save-invoice"]').click();
        await page.locator(".entry .entry-title", { hasText: "save-invoice" }).waitFor();
        expect(await page.locator("section.entry button").count()).toBe(0);
      } finally {
        await closer.closeAll();
      }
    },
    STEP_MS,
  );
});
