// /api/events: the engine's events as server-sent events, for one run or all; and, for a server attached
// beside the process that runs the workflows, a `changed` event when that process writes.

import { afterEach, expect, test } from "vitest";
import { attachEngine, Closer, startEngine, tempDb, until } from "../mcp/helpers.js";
import { openEvents, request, serveInspector } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

test("one run's stream carries its entries and status changes as they happen; the all-runs stream its statuses", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "a1", { amount: 5 });
  await until(async () => (await engine.store.findRun("approval", "a1"))?.status === "waiting", "the wait");
  const server = await serveInspector(closer, engine);

  const one = await openEvents(closer, `${server.base}/api/events?workflow=approval&key=a1`);
  expect(one.status).toBe(200);
  expect(one.headers["content-type"]).toContain("text/event-stream");
  await one.next((e) => e.event === "ready", "ready");
  const all = await openEvents(closer, `${server.base}/api/events`);
  await all.next((e) => e.event === "ready", "ready");

  await engine.getOrCreate("sleeper", "other");
  await all.next(
    (e) => e.event === "run" && e.data.key === "other",
    "the other run's status on the all-runs stream",
  );

  const sent = await request(`${server.base}/api/runs/approval/a1/messages`, {
    body: { queue: "decisions", body: { approve: true, by: "ann" } },
  });
  expect(sent.status).toBe(200);
  const applied = await one.next(
    (e) => e.event === "entry" && e.data.path === "apply-decision" && e.data.status === "completed",
    "the apply-decision entry",
  );
  expect(applied.data).toMatchObject({ workflow: "approval", key: "a1" });
  await one.next((e) => e.event === "run" && e.data.status === "completed", "the run's completion");
  await all.next(
    (e) => e.event === "run" && e.data.key === "a1" && e.data.status === "completed",
    "completion",
  );
  // A run's stream carries only that run.
  expect(one.events.some((e) => e.data?.key === "other")).toBe(false);
});

test("a server attached beside the owning process says `changed` when that process moves a run on", async () => {
  const db = tempDb(closer);
  const owner = await startEngine(closer, db);
  await owner.getOrCreate("approval", "a1", { amount: 5 });
  await until(async () => (await owner.store.findRun("approval", "a1"))?.status === "waiting", "the wait");

  const attached = await attachEngine(closer, db);
  const server = await serveInspector(closer, attached);
  expect((await request(`${server.base}/api/meta`)).json.attached).toBe(true);
  const stream = await openEvents(closer, `${server.base}/api/events?workflow=approval&key=a1`);
  await stream.next((e) => e.event === "ready", "ready");

  // The owner completes the run; the attached server only sees the database change.
  await (await owner.get("approval", "a1")).send("decisions", { approve: false, by: "bob" });
  await stream.next((e) => e.event === "changed", "a changed event");
  await until(
    async () => (await request(`${server.base}/api/runs/approval/a1`)).json.run.status === "completed",
    "the attached server to read the completed run",
  );
});
