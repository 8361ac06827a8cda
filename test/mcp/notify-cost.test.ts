// The cost of change notification is the runs that changed, not the subscriptions held: a server attached
// to a database holds 5,000 subscriptions (one per waiting run) while another engine moves one run on.
// Counted, not timed: how many runs the server reads whole (history pages) and which subscribers it calls;
// a run that changes without executing (a cancel while it waits) is still notified, by the row sweep.
// Before, every change by another process re-read every watched run (5,000 lookups and history reads).

import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, it } from "vitest";
import { attachEngine, Closer, connect, startEngine, tempDb, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const RUNS = 5000;

it("5,000 subscriptions across runs: a change by another process reads and notifies only the run that changed", async () => {
  const db = tempDb(closer);
  const owner = await startEngine(closer, db);
  for (let i = 0; i < RUNS; i++) await owner.getOrCreate("approval", `a-${i}`, { amount: i });
  await until(
    async () => (await owner.listWorkflows()).find((w) => w.name === "approval")?.runs.waiting === RUNS,
    "every run to wait for a decision",
    120_000,
  );

  const viewer = await attachEngine(closer, db);
  const counts = { history: 0, findRun: 0 };
  const history = viewer.history.bind(viewer);
  const findRun = viewer.findRun.bind(viewer);
  viewer.history = (...args: Parameters<typeof history>) => {
    counts.history++;
    return history(...args);
  };
  viewer.findRun = (...args: Parameters<typeof findRun>) => {
    counts.findRun++;
    return findRun(...args);
  };
  const client = await connect(closer, viewer, { maxSubscriptions: RUNS });
  const updated: string[] = [];
  client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => void updated.push(n.params.uri));
  for (let i = 0; i < RUNS; i++) await client.subscribeResource({ uri: `waymark://runs/approval/a-${i}` });

  // Quiet first: the subscriptions' own reads are done, and nothing is notified.
  const before = { ...counts };
  expect(updated).toEqual([]);

  // Another engine moves run a-7 on: a message, two steps, completed.
  const run = await owner.get("approval", "a-7");
  await run.send("decisions", { approve: true, by: "ann" });
  await run.result();
  await until(
    async () => (await viewer.info(run.id)).status === "completed" && updated.length > 0,
    "the viewer to notice",
  );
  // Let every check the viewer started finish (it polls the database every 50 ms).
  await new Promise((r) => setTimeout(r, 500));

  expect(new Set(updated)).toEqual(new Set(["waymark://runs/approval/a-7"]));
  const work = { history: counts.history - before.history, findRun: counts.findRun - before.findRun };
  // A handful of reads of a-7 (one per external change the viewer saw), none of the 4,999 others.
  expect(work.findRun).toBe(0);
  expect(work.history).toBeGreaterThan(0);
  expect(work.history).toBeLessThan(20);

  // A run that changes without executing (cancelled while it waits) is noticed by the row sweep.
  await owner.cancel((await owner.get("approval", "a-8")).id);
  await until(
    () => updated.includes("waymark://runs/approval/a-8"),
    "the cancel of a waiting run to be notified",
  );
  expect(new Set(updated)).toEqual(new Set(["waymark://runs/approval/a-7", "waymark://runs/approval/a-8"]));
}, 300_000);
