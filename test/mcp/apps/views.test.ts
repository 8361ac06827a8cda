// The MCP Apps surface through a real SDK client (in-memory pair): the views are offered only to a client that
// announces the extension, each a self-contained page whose policy allows no load and no connection;
// get_run, diagnose_run and review_approvals name them; review_approvals lists the waits with their schemas
// (a wait on two queues once, with a schema each; a batch with how many arrived); view_run is app-only and
// keeps to the answer budget; a read-only server's data says so.

import { RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import { afterEach, describe, expect, test } from "vitest";
import type { Engine } from "../../../src/engine/engine.js";
import { APPROVALS_VIEW_URI, RUN_VIEW_URI } from "../../../src/mcp/apps/uris.js";
import { MAX_ANSWER_CHARS } from "../../../src/mcp/budget.js";
import { Closer, call, connect, startEngine, tempDb, text, until } from "../helpers.js";
import { multiQueueRegistry, seedMultiQueue } from "./multi-queue.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const APPS = { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } };

async function setup() {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "order/7", { amount: 99 });
  await engine.getOrCreate("flaky", "bad-1", { size: 30_000 });
  await until(async () => (await engine.store.findRun("approval", "order/7"))?.status === "waiting", "wait");
  await until(async () => (await engine.store.findRun("flaky", "bad-1"))?.status === "failed", "failure");
  return engine;
}

describe("MCP Apps views", () => {
  test("a client without the extension (or announcing it without the MCP Apps mime type) gets no ui:// resources, no view_run and no tool naming a view", async () => {
    const engine = await setup();
    const plain = await connect(closer, engine);
    const keyOnly = await connect(closer, engine, {}, { extensions: { "io.modelcontextprotocol/ui": {} } });
    for (const client of [plain, keyOnly]) {
      const { resources } = await client.listResources();
      expect(resources.some((r) => r.uri.startsWith("ui://"))).toBe(false);
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).not.toContain("view_run");
      for (const name of ["get_run", "diagnose_run", "review_approvals", "list_runs"]) {
        const tool = tools.find((t) => t.name === name);
        expect(tool, name).toBeDefined();
        expect(tool?._meta?.ui, name).toBeUndefined();
        expect(tool?._meta?.["ui/resourceUri"], name).toBeUndefined();
      }
    }
    // The same server still names the views to a client that renders them.
    const apps = await connect(closer, engine, {}, APPS);
    const { tools } = await apps.listTools();
    const ui = (name: string) =>
      (tools.find((t) => t.name === name)?._meta as { ui?: { resourceUri?: string } })?.ui;
    expect(ui("get_run")?.resourceUri).toBe(RUN_VIEW_URI);
    expect(ui("diagnose_run")?.resourceUri).toBe(RUN_VIEW_URI);
    expect(ui("review_approvals")?.resourceUri).toBe(APPROVALS_VIEW_URI);
  });

  test("a client with the extension reads self-contained pages whose policy allows no load and that carry nothing of the server", async () => {
    const engine = await setup();
    const client = await connect(closer, engine, {}, APPS);
    const { resources } = await client.listResources();
    const views = resources.filter((r) => r.uri.startsWith("ui://"));
    expect(views.map((r) => r.uri).sort()).toEqual([APPROVALS_VIEW_URI, RUN_VIEW_URI].sort());
    for (const v of views) expect(v.mimeType).toBe(RESOURCE_MIME_TYPE);
    for (const uri of [RUN_VIEW_URI, APPROVALS_VIEW_URI]) {
      const read = await client.readResource({ uri });
      const page = read.contents[0] as { text: string; mimeType: string; _meta?: { ui?: { csp?: unknown } } };
      expect(page.mimeType).toBe(RESOURCE_MIME_TYPE);
      expect(page._meta?.ui?.csp).toEqual({ connectDomains: [], resourceDomains: [] });
      const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]+)">/.exec(page.text)?.[1];
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("connect-src 'none'");
      expect(csp).toMatch(/script-src 'sha256-[^']+'(;|$)/);
      // Nothing is fetched: no element loads a URL, no stylesheet link, no external script.
      expect(page.text).not.toMatch(/<(script|link|img|iframe)[^>]+(src|href)=/i);
      expect(page.text.match(/<script>/g)).toHaveLength(1);
    }
    // The page holds nothing of the server it came from (no token, no address, no mode): another server's
    // page, read-only and over another engine, is the same text.
    const other = await connect(closer, await startEngine(closer, tempDb(closer)), { readOnly: true }, APPS);
    for (const uri of [RUN_VIEW_URI, APPROVALS_VIEW_URI]) {
      const mine = (await client.readResource({ uri })).contents[0] as { text: string };
      const theirs = (await other.readResource({ uri })).contents[0] as { text: string };
      expect(theirs.text).toBe(mine.text);
    }
    const viewRun = (await client.listTools()).tools.find((t) => t.name === "view_run");
    expect((viewRun!._meta as { ui: { visibility: string[] } }).ui.visibility).toEqual(["app"]);
  });

  test("review_approvals lists the waiting run with its queue's schema; its text names send_message", async () => {
    const engine = await setup();
    const client = await connect(closer, engine);
    const r = await call(client, "review_approvals");
    expect(r.isError).toBeFalsy();
    const [a] = r.structuredContent!.approvals;
    expect(a).toMatchObject({
      workflow: "approval",
      key: "order/7",
      queue: "decisions",
      entry: "await-decision",
    });
    expect(a.messageSchema.required).toEqual(["approve", "by"]);
    expect(a.input).toEqual({ amount: 99 });
    expect(r.structuredContent!.canAnswer).toBe(true);
    expect(text(r)).toContain('approval/order/7 waits in "await-decision" for a message on "decisions"');
    expect(r.structuredContent!.nextActions[0]).toContain("send_message");
    expect((await call(client, "review_approvals", { queue: "other" })).structuredContent!.approvals).toEqual(
      [],
    );
    const ro = await call(await connect(closer, engine, { readOnly: true }), "review_approvals");
    expect(ro.structuredContent!.canAnswer).toBe(false);
    expect(ro.structuredContent!.nextActions.join(" ")).not.toMatch(/^send_message/);
  });

  test("review_approvals says a wait on two queues once, naming both with a schema each, and a batch's arrivals", async () => {
    const engine = (await multiQueueRegistry.start({ database: tempDb(closer) })) as unknown as Engine;
    closer.add(() => engine.close());
    await seedMultiQueue(engine);
    const client = await connect(closer, engine);
    const r = await call(client, "review_approvals");
    expect(r.isError).toBeFalsy();
    const approvals = r.structuredContent!.approvals;
    expect(approvals.map((a: { key: string }) => a.key).sort()).toEqual(["c-1", "e-1"]);
    const e = approvals.find((a: { key: string }) => a.key === "e-1");
    expect(e).toMatchObject({ entry: "decide", queue: "approve", batch: null });
    expect(e.queues.map((q: { queue: string }) => q.queue)).toEqual(["approve", "reject"]);
    expect(e.queues[0].messageSchema.required).toEqual(["by"]);
    expect(e.queues[1].messageSchema.required).toEqual(["by", "reason"]);
    const c = approvals.find((a: { key: string }) => a.key === "c-1");
    expect(c).toMatchObject({ entry: "collect", queue: "items", batch: { count: 3, arrived: 1 } });
    const said = text(r);
    expect(said).toMatch(/^2 wait\(s\) for a decision/);
    expect(said).toContain('expense/e-1 waits in "decide" for a message on "approve" or "reject"');
    expect(said).toContain(
      'collect/c-1 waits in "collect" for a batch of 3 messages on "items" (1 of 3 arrived)',
    );
    expect(said.match(/expense\/e-1 waits/g)).toHaveLength(1);
    // Asked for one of its queues, the wait is still said whole: a message on either answers it.
    const onReject = await call(client, "review_approvals", { queue: "reject" });
    expect(onReject.structuredContent!.approvals).toHaveLength(1);
    expect(onReject.structuredContent!.approvals[0].queues).toHaveLength(2);
  });

  test("view_run answers the inspector's shapes within the budget; read-only says so and allows nothing", async () => {
    const engine = await setup();
    const client = await connect(closer, engine, {}, APPS);
    const failed = await call(client, "view_run", { workflow: "flaky", key: "bad-1", entry: 1 });
    expect(failed.isError).toBeFalsy();
    expect(JSON.stringify(failed).length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    const v = failed.structuredContent!;
    expect(v.run.run.status).toBe("failed");
    expect(v.run.can).toEqual({ send: false, cancel: false, replay: true });
    expect(v.history.entries.map((e: { path: string }) => e.path)).toEqual(["load", "charge"]);
    expect(v.entry.path).toBe("load");
    // The 30,000-character state is clipped to the view's size, saying how large it is.
    expect(v.entry.stateAfter.$clipped).toBe(true);
    expect(v.diagnosis.culprit.path).toBe("charge");
    const ro = await connect(closer, engine, { readOnly: true }, APPS);
    const waiting = (await call(ro, "view_run", { workflow: "approval", key: "order/7" })).structuredContent!;
    expect(waiting.readOnly).toBe(true);
    expect(waiting.run.can).toEqual({ send: false, cancel: false, replay: false });
    expect(waiting.run.waiting[0].messageSchema.required).toEqual(["approve", "by"]);
    expect(waiting.diagnosis).toBeNull();
  });
});
