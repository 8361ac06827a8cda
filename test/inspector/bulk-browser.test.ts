// "Replay all N" in a real Chromium: 3 invoices fail at "tax" (one with an HTML key) and 1 at "mail"; the
// fix lands; the runs page lists both signatures; "Replay all 3" shows the dry run's preview of those 3 and,
// on confirm, replays exactly them and shows the counts; the mail run stays failed. A read-only server shows
// no button. No step waits for a time: each waits for the page to show something.

import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { launchBrowser } from "../browser.js";
import { Closer, ROOT, tempDb } from "../mcp/helpers.js";
import { failingInvoices, HOSTILE_KEY, MAIL_KEY, TAX_KEYS } from "./bulk-fixture.js";
import { serveInspector } from "./helpers.js";

const ARTIFACTS = path.join(ROOT, "test-artifacts", "inspector");
const closer = new Closer();
let browser: Browser;
let page: Page;

beforeAll(async () => {
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(30_000);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await closer.closeAll();
});

async function shot(name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

test("Replay all 3 previews the group's 3 runs and, on confirm, replays exactly them", async () => {
  const { engine, tax, mail } = await failingInvoices(closer, tempDb(closer));
  const { base } = await serveInspector(closer, engine);
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));
  await page.goto(base);

  const taxRow = page.locator(`.failures tr[data-signature="${tax}"]`);
  const mailRow = page.locator(`.failures tr[data-signature="${mail}"]`);
  await taxRow.waitFor();
  await mailRow.waitFor();
  expect(await taxRow.locator(".failure-count").textContent()).toBe("3");
  // The HTML key is text in a link, not markup.
  expect(await taxRow.locator(".failure-keys a", { hasText: HOSTILE_KEY }).count()).toBe(1);
  expect(await page.locator(".failures img").count()).toBe(0);
  expect(await mailRow.locator("button.replay-all").textContent()).toBe("Replay all 1");

  await taxRow.locator("button.replay-all", { hasText: "Replay all 3" }).click();
  const dialog = page.locator("#dialog[open]");
  await dialog.locator(".bulk-plan").waitFor();
  expect(await dialog.locator(".bulk-count").textContent()).toMatch(/^Replays 3 runs of the 3 /);
  expect(await dialog.locator(".bulk-signatures li").allTextContents()).toEqual([
    "invoice Tax API answered <n> for invoice <n>: 3 (3 to replay)",
  ]);
  const samples = dialog.locator(".bulk-samples li");
  expect((await samples.evaluateAll((els) => els.map((e) => e.getAttribute("data-run")))).sort()).toEqual(
    TAX_KEYS.map((k) => `invoice/${k}`).sort(),
  );
  expect(await samples.first().textContent()).toMatch(
    /from tax; discards 1 entry \(tax\); runs again: tax; version 1 → 2/,
  );
  expect(await dialog.locator("img").count()).toBe(0);
  expect(await dialog.locator(".bulk-refused, .muted", { hasText: "None." }).count()).toBe(1);
  // Nothing is replayed by the preview.
  for (const key of TAX_KEYS) expect((await engine.findRun("invoice", key))!.status).toBe("failed");
  await shot("bulk-replay-preview");

  const posted = page.waitForRequest(
    (r) => r.method() === "POST" && r.postData()?.includes('"plan"') === true,
  );
  await dialog.locator("button", { hasText: "Replay 3 now" }).click();
  const sent = JSON.parse((await posted).postData() ?? "null");
  expect(Object.keys(sent)).toEqual(["plan"]);
  expect(sent.plan).toMatch(/^plan_/);
  const result = page.locator("#dialog[open] .bulk-counts");
  await result.waitFor();
  expect(await result.textContent()).toBe("Replayed 3, stored for the worker 0, refused 0, skipped 0.");
  await shot("bulk-replay-result");
  await page.locator("#dialog[open] button", { hasText: "Close" }).click();

  for (const key of TAX_KEYS) expect(await (await engine.get("invoice", key)).result()).toBe("paid");
  expect((await engine.findRun("invoice", MAIL_KEY))!.status).toBe("failed");
  // The list reloads: the tax group is gone, the mail group stays.
  await taxRow.waitFor({ state: "detached" });
  await mailRow.waitFor();
  expect(await page.title()).not.toBe("pwned");
  expect(errors).toEqual([]);
}, 120_000);

test("a read-only server lists the failures without a Replay all button", async () => {
  const { engine, tax } = await failingInvoices(closer, tempDb(closer));
  const { base } = await serveInspector(closer, engine, { inspector: { readOnly: true } });
  await page.goto(base);
  const taxRow = page.locator(`.failures tr[data-signature="${tax}"]`);
  await taxRow.waitFor();
  expect(await taxRow.locator(".failure-count").textContent()).toBe("3");
  expect(await page.locator("button.replay-all").count()).toBe(0);
}, 120_000);
