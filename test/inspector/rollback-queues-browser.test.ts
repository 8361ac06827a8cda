// Issue 20's run pages in a real Chromium (one launch for the file), on SQLite and PostgreSQL:
// - a trip that fails at its payment and rolls back: the car is undone, the hotel's handler fails, so the
//   flight is never undone. The page says so step by step, the status, and the handlers' entries.
// - an expense waiting on "approve" or "reject": the page shows the one wait on each queue with a form for
//   each, and sending on the second from the page wakes the run with it.
// Screenshots go to test-artifacts/inspector/. No step waits for a time: each waits for the page to show
// something.

import fs from "node:fs";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, test } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import type { Engine } from "../../src/engine/engine.js";
import { FatalError, setup, workflow } from "../../src/index.js";
import { launchBrowser } from "../browser.js";
import { Closer, ROOT, tempDb } from "../mcp/helpers.js";
import { tempSchema } from "../postgres/pg.js";
import { serveInspector } from "./helpers.js";

const ARTIFACTS = path.join(ROOT, "test-artifacts", "inspector");
const closer = new Closer();
let browser: Browser;
let page: Page;
let errors: string[] = [];

const BACKENDS = [
  { name: "sqlite", database: async () => tempDb(closer) },
  { name: "postgres", database: async () => (await tempSchema()).url },
] as const;

beforeAll(async () => {
  browser = await launchBrowser();
  page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
  page.setDefaultTimeout(30_000);
  page.on("pageerror", (e) => errors.push(e.message));
}, 120_000);

afterEach(async () => {
  await closer.closeAll();
  errors = [];
});

afterAll(async () => {
  await browser?.close();
});

async function shot(name: string): Promise<void> {
  fs.mkdirSync(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: path.join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** The hotel's undo waits for this before it fails, so the page can be read while the run rolls back. */
let hotelDesk = gate();

function gate(): { promise: Promise<void>; resolve: () => void } {
  let resolve = () => {};
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

/** Reserves a flight, a hotel and a car (each with an undo), then the card is declined; the hotel desk is closed. */
const trip = workflow({
  run: async (ctx) => {
    await ctx.rollbackCheckpoint("booking");
    await ctx.step("load-cart", () => ({ items: 3 }));
    await ctx.step("reserve-flight", () => ({ id: "F1" }), { rollback: () => {} });
    await ctx.step("reserve-hotel", () => ({ id: "H1" }), {
      retries: 0,
      rollback: async () => {
        await hotelDesk.promise;
        throw new Error("hotel desk closed");
      },
    });
    await ctx.step("reserve-car", () => ({ id: "C1" }), { rollback: () => {} });
    await ctx.step(
      "capture-payment",
      () => {
        throw new FatalError("card declined");
      },
      { retries: 0 },
    );
  },
});

const expense = workflow({
  queues: {
    approve: z.object({ by: z.string() }),
    reject: z.object({ by: z.string(), reason: z.string() }),
  },
  run: async (ctx) => {
    const got = await ctx.queue.next("decide", { queue: ["approve", "reject"] });
    return got.queue === "reject"
      ? `rejected by ${got.body.by}: ${got.body.reason}`
      : `approved by ${got.body.by}`;
  },
});

async function start(database: () => Promise<string>): Promise<{ engine: Engine; base: string }> {
  const engine = (await setup({ use: { trip, expense } }).start({
    database: await database(),
  })) as unknown as Engine;
  closer.add(() => engine.close());
  const { base } = await serveInspector(closer, engine);
  return { engine, base };
}

describe.each(BACKENDS)("issue 20 run pages in chromium ($name)", ({ name, database }) => {
  test("a run that failed and rolled back shows what was undone, what not, whose undo failed, and the handlers' entries", async () => {
    const { engine, base } = await start(database);
    hotelDesk = gate();
    const run = await engine.getOrCreate("trip", "t-1");
    await waitForStatus(engine, run, ["rolling-back"]);

    // While the hotel's undo runs: the status says so, the car is undone, the flight not yet.
    await page.goto(`${base}/#/run/trip/t-1`);
    await page.locator(".run-status .badge.st-rolling-back", { hasText: "rolling-back" }).waitFor();
    const panel = page.locator("section.run-rollback");
    const steps = panel.locator("li.rb-step");
    await panel.locator('li.rb-step[data-step="reserve-car"][data-state="undone"]').waitFor();
    expect(await panel.locator("p").first().textContent()).toContain("1 of 3 steps undone, rolling back");
    expect(await panel.locator('li[data-step="reserve-flight"]').getAttribute("data-state")).toBe(
      "not-undone",
    );
    await shot(`rollback-rolling-back-${name}`);

    // The hotel's undo fails: the run ends failed, and the page moves on by itself.
    hotelDesk.resolve();
    const info = await waitForStatus(engine, run, ["failed"]);
    expect(info.error?.code).toBe("ROLLBACK_FAILED");
    await page.locator(".run-status .badge", { hasText: "failed" }).waitFor();
    await panel.locator('li.rb-step[data-step="reserve-hotel"][data-state="failed"]').waitFor();
    expect(await panel.locator("p").first().textContent()).toContain(
      "failed at capture-payment; 1 of 3 steps undone, reserve-hotel failed to undo",
    );
    // Each step with an undo, in the order they are undone, and what became of it.
    expect(
      await steps.evaluateAll((els) =>
        els.map((e) => `${e.getAttribute("data-step")}:${e.getAttribute("data-state")}`),
      ),
    ).toEqual(["reserve-car:undone", "reserve-hotel:failed", "reserve-flight:not-undone"]);
    expect(await steps.nth(0).textContent()).toContain("undone");
    expect(await steps.nth(1).textContent()).toContain("hotel desk closed");
    expect(await steps.nth(2).textContent()).toContain("not undone");
    // A step with no undo is not in the list.
    expect(await panel.locator('li[data-step="load-cart"]').count()).toBe(0);

    // The handlers' own entries are on the timeline, under a lane that says what they are.
    const car = page.locator('.tl-main[data-path="~rollback/reserve-car"]');
    const hotel = page.locator('.tl-main[data-path="~rollback/reserve-hotel"]');
    expect(await car.getAttribute("data-status")).toBe("completed");
    expect(await hotel.getAttribute("data-status")).toBe("failed");
    expect(await page.locator('.tl-main[data-path="~rollback/reserve-flight"]').count()).toBe(0);
    expect(await page.locator(".tl-lane", { hasText: "~rollback" }).count()).toBe(0);
    await page.locator(".tl-lane", { hasText: "rollback handlers" }).waitFor();
    // The steps themselves stay completed.
    expect(await page.locator('.tl-main[data-path="reserve-car"]').getAttribute("data-status")).toBe(
      "completed",
    );
    // A step in the list opens its handler's entry.
    await steps.nth(1).locator("button").click();
    await page.locator(".entry .entry-title", { hasText: "reserve-hotel" }).waitFor();
    expect(await page.locator("section.entry .error-text").first().textContent()).toContain(
      "hotel desk closed",
    );
    await shot(`rollback-run-${name}`);
    expect(errors).toEqual([]);
  }, 120_000);

  test("a run waiting on two queues shows the wait on each with a form for each; sending on the second wakes it", async () => {
    const { engine, base } = await start(database);
    const run = await engine.getOrCreate("expense", "e-1");
    await waitForStatus(engine, run, ["waiting"]);

    await page.goto(`${base}/#/run/expense/e-1`);
    await page.locator(".run-status .badge", { hasText: "waiting" }).waitFor();
    const waiting = page.locator("section.waiting");
    await waiting.waitFor();
    const approve = waiting.locator('form.message-form[data-queue="approve"]');
    const reject = waiting.locator('form.message-form[data-queue="reject"]');
    await approve.waitFor();
    await reject.waitFor();
    // One wait, on either queue: said once, naming both, and no queue offered again under "another queue".
    const heads = await waiting.locator(".wait-item h3").allTextContents();
    expect(heads).toEqual(["Waiting for a message on approve or reject"]);
    expect(await waiting.locator(".wait-item > p.muted").textContent()).toContain("in decide");
    expect(await waiting.locator(".wait-queue h4").allTextContents()).toEqual(["On approve", "On reject"]);
    // The timeline says the same, not only the first queue.
    expect(await page.locator('.tl-main[data-path="decide"] .tl-note').textContent()).toBe(
      "on approve or reject",
    );
    expect(await waiting.locator("details.send-other").count()).toBe(0);
    expect(await reject.locator('input[data-field="reason"]').count()).toBe(1);
    expect(await approve.locator('input[data-field="reason"]').count()).toBe(0);
    await shot(`multi-queue-waiting-${name}`);

    await reject.locator('input[data-field="by"]').fill("bob");
    await reject.locator('input[data-field="reason"]').fill("duplicate");
    await reject.locator("button", { hasText: "Send to reject" }).click();
    await page.locator(".run-status .badge", { hasText: "completed" }).waitFor();
    expect(await run.result({ timeout: 10_000 })).toBe("rejected by bob: duplicate");
    await page.locator('.tl-main[data-path="decide"][data-status="completed"]').waitFor();
    await waiting.waitFor({ state: "detached" });
    await shot(`multi-queue-sent-${name}`);
    expect(errors).toEqual([]);
  }, 120_000);
});
