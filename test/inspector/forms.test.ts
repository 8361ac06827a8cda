// Message forms built from a queue's schema, in Chromium, when the schema's field names are also names
// of a form element's own properties (addEventListener, classList, submit, action, elements, ...): such
// names must not reach the form through DOM clobbering (a control named "addEventListener" used to
// replace form.addEventListener, so no form rendered), and the message must arrive with the right body.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, expect, test } from "vitest";
import { z } from "zod";
import type { Engine } from "../../src/engine/engine.js";
import { setup, workflow } from "../../src/index.js";
import { launchBrowser } from "../browser.js";
import { Closer, until } from "../mcp/helpers.js";
import { serveInspector } from "./helpers.js";

// Names an HTMLFormElement (or Object.prototype) already has, as top-level and nested fields.
const clobbering = workflow({
  queues: {
    input: z.object({
      addEventListener: z.string(),
      classList: z.string(),
      submit: z.string(),
      action: z.string(),
      elements: z.string(),
      ["__proto__"]: z.string(),
      constructor: z.number(),
      reset: z.boolean(),
      nested: z.object({ querySelector: z.string(), hasOwnProperty: z.string() }),
      approve: z.boolean(),
    }),
  },
  run: async (ctx) => {
    const body = await ctx.queue.next("wait-for-input", { queue: "input" });
    // The run's output shows what it received, with its own keys.
    return { received: JSON.parse(JSON.stringify(body)), keys: Object.keys(body) };
  },
});

const closer = new Closer();
const temp = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-inspector-forms-"));
let engine: Engine;
let base = "";
let browser: Browser;
let page: Page;

beforeAll(async () => {
  engine = (await setup({ use: { clobbering } }).start({
    database: path.join(temp, "forms.db"),
  })) as unknown as Engine;
  closer.add(() => engine.close());
  base = (await serveInspector(closer, engine)).base;
  browser = await launchBrowser();
  closer.add(() => browser.close());
  page = await browser.newPage();
  page.setDefaultTimeout(30_000);
}, 120_000);

afterAll(async () => {
  await closer.closeAll();
  fs.rmSync(temp, { recursive: true, force: true });
});

test("a schema whose fields are named addEventListener, classList, submit, action, elements, __proto__, constructor renders and sends the right body", async () => {
  const run = await engine.getOrCreate("clobbering", "c1", null);
  await until(async () => (await run.status()) === "waiting", "the run waiting on its queue");
  const errors: string[] = [];
  page.on("pageerror", (e) => errors.push(e.message));

  await page.goto(`${base}/#/run/clobbering/c1`);
  const form = page.locator('form.message-form[data-queue="input"]');
  await form.waitFor();
  const byLabel = (name: string) => form.getByLabel(name, { exact: true });
  for (const name of ["addEventListener", "classList", "submit", "action", "elements", "__proto__"]) {
    await byLabel(name).fill(`value of ${name}`);
  }
  await byLabel("constructor").fill("7");
  await byLabel("reset").check();
  await byLabel("querySelector").fill("nested q");
  await byLabel("hasOwnProperty").fill("nested h");

  const posted = page.waitForRequest((r) => r.method() === "POST" && r.url().endsWith("/messages"));
  await form.locator("button", { hasText: "Approve" }).click();
  const sent = JSON.parse((await posted).postData() ?? "null");
  const expected = JSON.parse(
    JSON.stringify({
      addEventListener: "value of addEventListener",
      classList: "value of classList",
      submit: "value of submit",
      action: "value of action",
      elements: "value of elements",
      constructor: 7,
      reset: true,
      nested: { querySelector: "nested q", hasOwnProperty: "nested h" },
      approve: true,
    }).replace(/^\{/, '{"__proto__":"value of __proto__",'),
  );
  expect(Object.hasOwn(sent.body, "__proto__")).toBe(true); // an own key, not a prototype
  expect(sent.queue).toBe("input");
  expect(sent.body).toEqual(expected);

  await page.locator(".run-status .badge", { hasText: "completed" }).waitFor();
  const result = (await run.result()) as { received: Record<string, unknown>; keys: string[] };
  // The run gets every field the form sent but "__proto__": zod 4 validates a declared "__proto__"
  // and leaves it out of its parse output by design, and the engine delivers zod's output. (A
  // follow-up for the engine: refuse such a key at send rather than drop it.)
  const { ["__proto__"]: _dropped, ...kept } = expected;
  expect(result.received).toEqual(kept);
  expect(result.keys.sort()).toEqual(Object.keys(kept).sort());
  expect(errors).toEqual([]);
}, 60_000);
