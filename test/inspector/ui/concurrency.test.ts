// The inspector's run page for a run queued behind its concurrency limit: the API (real HTTP, port 0) answers
// the run's concurrency, and the run view drawn from that answer says "Queued behind 2 runs of customer c-9"
// with links to the holders; a holder's page says it holds a slot.

import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { afterEach, expect, test } from "vitest";
import { internals } from "../../../src/engine/engine.js";
import { setup, workflow } from "../../../src/index.js";
import { RunView } from "../../../src/inspector/static/run-view.js";
import { Closer, tempDb, until } from "../../mcp/helpers.js";
import { request, serveInspector } from "../helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const invoice = workflow({
  concurrency: { limit: 2, key: (input: { customerId: string }) => input.customerId, label: "customer" },
  run: async (ctx, _input: { customerId: string }) => {
    await ctx.step(
      "charge",
      () => {
        throw new Error("card network down");
      },
      { backoff: "1h" },
    );
  },
});

const text = (html: string) =>
  html
    .replace(/<[^>]+>/g, " ")
    .replace(/&amp;/g, "&")
    .replace(/\s+/g, " ");

test("a queued run's page names its key, its limit and the runs holding the slots", async () => {
  const engine = internals(await setup({ use: { invoice } }).start({ database: tempDb(closer) }));
  closer.add(() => engine.close());
  for (const key of ["inv-1", "inv-2"]) {
    await engine.getOrCreate("invoice", key, { customerId: "c-9" });
    await until(async () => (await engine.store.findRun("invoice", key))?.status === "retrying", key);
  }
  const queued = await engine.getOrCreate("invoice", "inv-3", { customerId: "c-9" });
  await engine.tick();
  await until(async () => (await engine.store.getRun(queued.id))?.queuedAt != null, "inv-3 queued");
  const server = await serveInspector(closer, engine);
  const api = (path: string) => request(`${server.base}/api${path}`);

  const page = await api("/runs/invoice/inv-3");
  expect(page.status).toBe(200);
  expect(page.json.concurrency).toMatchObject({
    key: "c-9",
    limit: 2,
    queued: true,
    holders: [{ key: "inv-1" }, { key: "inv-2" }],
    text: "queued behind 2 runs of customer c-9 (limit 2 at once: invoice/inv-1, invoice/inv-2)",
  });
  const history = (await api("/runs/invoice/inv-3/history")).json;
  const view = (answer: unknown) =>
    renderToString(
      h(RunView, {
        run: answer as never,
        history,
        selectedId: null,
        entry: null,
        diagnosis: null,
        now: engine.clock.now(),
        readOnly: true,
        actions: { select: () => {}, replay: () => {}, cancel: () => {}, send: async () => "" },
      } as never),
    );
  const html = view(page.json);
  expect(text(html)).toContain("Queued behind 2 runs of customer c-9");
  expect(text(html)).toContain("At most 2 at once");
  expect(html).toContain('href="#/run/invoice/inv-1"');
  expect(html).toContain('href="#/run/invoice/inv-2"');

  const holder = (await api("/runs/invoice/inv-1")).json;
  expect(text(view(holder))).toContain("Holds one of the 2 slots of customer c-9.");
}, 60_000);
