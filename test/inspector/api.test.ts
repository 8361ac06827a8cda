// The inspector's JSON API on a real HTTP server (port 0): lists with filters and pages, a run, its
// history and entries, messages, replay with a dry run, cancel, and the page's own files.

import { afterEach, expect, test } from "vitest";
import { booking } from "../../fixtures/workflows/booking.js";
import { type Engine, internals } from "../../src/engine/engine.js";
import { setup } from "../../src/index.js";
import { Closer, startEngine, tempDb, until } from "../mcp/helpers.js";
import { repair } from "../mcp/workflows.js";
import { request, serveInspector } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

async function status(engine: Engine, workflow: string, key: string, want: string) {
  await until(
    async () => (await engine.store.findRun(workflow, key))?.status === want,
    `${workflow}/${key} ${want}`,
  );
}

async function seeded() {
  const engine = await startEngine(closer, tempDb(closer));
  for (const key of ["a1", "a2", "a3"]) {
    await engine.getOrCreate("approval", key, { amount: Number(key.slice(1)) * 10 });
    await status(engine, "approval", key, "waiting");
  }
  await engine.getOrCreate("flaky", "f1");
  await status(engine, "flaky", "f1", "failed");
  await engine.getOrCreate("sleeper", "s1");
  await status(engine, "sleeper", "s1", "sleeping");
  const server = await serveInspector(closer, engine);
  return {
    engine,
    api: (path: string, init?: Parameters<typeof request>[1]) => request(`${server.base}/api${path}`, init),
  };
}

test("runs come newest first, a page at a time, filtered by workflow, status, key, error text and time", async () => {
  const { api } = await seeded();

  const wf = await api("/workflows");
  expect(wf.status).toBe(200);
  expect(wf.json.totals).toEqual({ waiting: 3, failed: 1, sleeping: 1 });
  expect(wf.json.workflows.find((w: any) => w.name === "approval").runs).toEqual({ waiting: 3 });

  const first = await api("/runs?limit=2");
  expect(first.json.runs.map((r: any) => `${r.workflow}/${r.key}`)).toEqual(["sleeper/s1", "flaky/f1"]);
  const second = await api(`/runs?limit=2&cursor=${encodeURIComponent(first.json.nextCursor)}`);
  expect(second.json.runs.map((r: any) => r.key)).toEqual(["a3", "a2"]);
  const last = await api(`/runs?limit=2&cursor=${encodeURIComponent(second.json.nextCursor)}`);
  expect(last.json.runs.map((r: any) => r.key)).toEqual(["a1"]);
  expect(last.json.nextCursor).toBeNull();

  const failed = await api("/runs?status=failed");
  expect(failed.json.runs).toHaveLength(1);
  expect(failed.json.runs[0]).toMatchObject({ workflow: "flaky", key: "f1", status: "failed" });
  expect(failed.json.runs[0].error.message).toContain("card declined");

  const keys = (res: { json: any }) => res.json.runs.map((r: any) => r.key).sort();
  expect(keys(await api("/runs?status=waiting,sleeping"))).toEqual(["a1", "a2", "a3", "s1"]);
  expect(keys(await api("/runs?workflow=approval"))).toEqual(["a1", "a2", "a3"]);
  expect(keys(await api("/runs?key=2"))).toEqual(["a2"]);
  expect(keys(await api("/runs?error=insufficient"))).toEqual(["f1"]);
  expect(keys(await api(`/runs?after=${Date.now() + 60_000}`))).toEqual([]);
  expect(keys(await api(`/runs?before=${new Date(Date.now() + 60_000).toISOString()}`))).toHaveLength(5);

  const bad = await api("/runs?status=bogus");
  expect(bad.status).toBe(400);
  expect(bad.json.error.code).toBe("INVALID_INPUT");
  expect(bad.json.error.message).toContain("statuses are");
  expect((await api("/runs?after=yesterday")).status).toBe(400);
});

test("a run shows what it waits on with the queue's schema; its history; an entry with the state before and after", async () => {
  const { api } = await seeded();
  const run = await api("/runs/approval/a2");
  expect(run.status).toBe(200);
  expect(run.json.run).toMatchObject({
    workflow: "approval",
    key: "a2",
    status: "waiting",
    input: { amount: 20 },
  });
  expect(run.json.waiting).toHaveLength(1);
  expect(run.json.waiting[0]).toMatchObject({ kind: "queue", queue: "decisions", entry: "await-decision" });
  expect(run.json.waiting[0].messageSchema.required).toEqual(["approve", "by"]);
  expect(run.json.queues.map((q: any) => q.name)).toEqual(["decisions"]);
  expect(run.json.can).toEqual({ send: true, cancel: true, replay: true });

  const history = await api("/runs/approval/a2/history");
  expect(history.json.entries.map((e: any) => [e.path, e.kind, e.status])).toEqual([
    ["record-amount", "step", "completed"],
    ["await-decision", "queue", "waiting"],
  ]);
  // What each bar is comes with it, so the page needs no list of kinds.
  expect(history.json.entries.map((e: any) => [e.kind, e.container, e.wait, e.marker])).toEqual([
    ["step", false, false, false],
    ["queue", false, true, false],
  ]);
  const recorded = history.json.entries[0];
  expect(recorded.attempts).toHaveLength(1);
  expect(recorded.startedAt).toBeLessThanOrEqual(recorded.endedAt);

  const entry = await api(`/runs/approval/a2/entries/${recorded.id}`);
  expect(entry.json.entry.stateBefore).toMatchObject({ amount: 0 });
  expect(entry.json.entry.stateAfter).toMatchObject({ amount: 20 });

  const failed = await api("/runs/flaky/f1/history");
  const charge = failed.json.entries.find((e: any) => e.path === "charge");
  expect(charge.status).toBe("failed");
  expect(charge.attempts[0].error.message).toContain("card declined");
  const detail = await api(`/runs/flaky/f1/entries/${charge.id}`);
  expect(detail.json.entry.error.stack).toContain("FatalError");

  const diagnosis = await api("/runs/flaky/f1/diagnosis");
  expect(diagnosis.status).toBe(200);
  expect(diagnosis.json.diagnosis.culprit).toMatchObject({ path: "charge" });
  expect(diagnosis.json.diagnosis.summary).toContain("card declined");

  const missing = await api("/runs/approval/nope");
  expect(missing.status).toBe(404);
  expect(missing.json.error.code).toBe("RUN_NOT_FOUND");
  expect((await api("/runs/approval/a2/entries/999")).json.error.code).toBe("ENTRY_NOT_FOUND");
  expect((await api("/runs/approval/a2/entries/x")).status).toBe(400);
  expect((await api("/runs/approval/a2/nothing")).status).toBe(404);
  expect((await api("/runs/approval/a2/history", { method: "DELETE" })).status).toBe(405);
});

test("keys with slashes and spaces are addressed with URL encoding", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "team/a b", { amount: 1 });
  await status(engine, "approval", "team/a b", "waiting");
  const server = await serveInspector(closer, engine);
  const run = await request(`${server.base}/api/runs/approval/${encodeURIComponent("team/a b")}`);
  expect(run.json.run.key).toBe("team/a b");
});

test("a message is checked against the queue's schema, stored once per idempotency key, and wakes the run", async () => {
  const { engine, api } = await seeded();
  const bad = await api("/runs/approval/a1/messages", {
    body: { queue: "decisions", body: { approve: "yes", by: "" } },
  });
  expect(bad.status).toBe(400);
  expect(bad.json.error.code).toBe("INVALID_MESSAGE");
  expect(bad.json.error.problems.join(" ")).toContain("approve");
  const wrongQueue = await api("/runs/approval/a1/messages", { body: { queue: "decision", body: {} } });
  expect(wrongQueue.json.error.message).toContain("Its queues are: decisions");

  const body = { queue: "decisions", body: { approve: true, by: "ann" }, idempotencyKey: "k-1" };
  const sent = await api("/runs/approval/a1/messages", { body });
  expect(sent.status).toBe(200);
  expect(sent.json.duplicate).toBe(false);
  await status(engine, "approval", "a1", "completed");
  expect((await api("/runs/approval/a1")).json.run.output).toEqual({ approved: true, by: "ann" });

  // The same send retried after the run read it and finished: a duplicate, not an error.
  const retried = await api("/runs/approval/a1/messages", { body });
  expect(retried.status).toBe(200);
  expect(retried.json).toMatchObject({ messageId: sent.json.messageId, duplicate: true });
  const finished = await api("/runs/approval/a1/messages", { body: { ...body, idempotencyKey: "k-2" } });
  expect(finished.status).toBe(409);
  expect(finished.json.error.code).toBe("RUN_FINISHED");
});

test("replay answers a dry run first and changes nothing, then replays after the fix; cancel stops a run", async () => {
  const { engine, api } = await seeded();
  await engine.getOrCreate("fixable", "x1");
  await status(engine, "fixable", "x1", "failed");

  const plan = await api("/runs/fixable/x1/replay", { body: { dryRun: true } });
  expect(plan.status).toBe(200);
  expect(plan.json).toMatchObject({ dryRun: true, applied: false, from: { path: "charge" } });
  expect(plan.json.discard.map((d: any) => d.path)).toEqual(["charge"]);
  expect((await api("/runs/fixable/x1")).json.run.status).toBe("failed");

  repair("x1");
  const done = await api("/runs/fixable/x1/replay", { body: { fromStep: "charge" } });
  expect(done.json).toMatchObject({ dryRun: false, applied: true });
  await status(engine, "fixable", "x1", "completed");
  const history = (await api("/runs/fixable/x1/history")).json.entries;
  expect(history.map((e: any) => [e.path, e.status])).toEqual([
    ["prepare", "completed"],
    ["~replay/replay-1", "completed"],
    ["charge", "completed"],
  ]);
  expect(history.map((e: any) => e.marker)).toEqual([false, true, false]);

  const refused = await api("/runs/approval/a2/replay", { body: { fromStep: "nope" } });
  expect(refused.status).toBe(400);

  const cancelled = await api("/runs/sleeper/s1/cancel", { body: {} });
  expect(cancelled.json).toEqual({ status: "cancelled" });
  expect((await api("/runs/sleeper/s1")).json.can).toEqual({ send: false, cancel: false, replay: true });
});

test("the page and its files are served with a content security policy and ETags", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const server = await serveInspector(closer, engine);
  const page = await request(`${server.base}/`);
  expect(page.status).toBe(200);
  expect(page.headers["content-type"]).toContain("text/html");
  expect(page.headers["content-security-policy"]).toContain("script-src 'self'");
  expect(page.headers["x-content-type-options"]).toBe("nosniff");
  expect(page.text).toContain('src="assets/app.js"');

  const script = await request(`${server.base}/assets/app.js`);
  expect(script.headers["content-type"]).toContain("text/javascript");
  const again = await request(`${server.base}/assets/app.js`, {
    headers: { "if-none-match": String(script.headers.etag) },
  });
  expect(again.status).toBe(304);

  for (const path of ["/assets/../package.json", "/assets/%2e%2e%2fapi.ts", "/assets/nope.js", "/index.ts"]) {
    expect((await request(`${server.base}${path}`)).status).toBe(404);
  }
  expect((await request(`${server.base}/`, { method: "POST", body: {} })).status).toBe(405);
  const meta = await request(`${server.base}/api/meta`);
  expect(meta.json).toMatchObject({ readOnly: false, attached: false });
});

test("a rolled-back run says what its rollback undid", async () => {
  const started = await setup({ use: { booking } }).start({ database: tempDb(closer) });
  closer.add(() => started.close());
  const engine = internals(started);
  await engine.getOrCreate("booking", "trip-9", { trip: "9", card: "0000-2222" });
  await status(engine, "booking", "trip-9", "failed");
  const server = await serveInspector(closer, engine);
  const run = await request(`${server.base}/api/runs/booking/trip-9`);
  expect(run.json.rollback).toMatchObject({
    failedAt: "capture-payment",
    total: 3,
    undone: ["reserve-car", "reserve-hotel", "reserve-flight"],
    failed: null,
    text: "failed at capture-payment; 3 of 3 steps undone",
  });
  const waiting = await request(`${server.base}/api/runs/booking/trip-9/history`);
  expect(waiting.json.entries.filter((e: any) => e.kind === "rollback")).toHaveLength(3);
});
