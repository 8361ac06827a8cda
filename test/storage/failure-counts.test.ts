// Store conformance, failure counts (migration 12): the counts list_failures reads stay exactly the failing runs
// grouped by day, signature and workflow through every write that makes a run fail or stop failing (a failure,
// a retry that gives up, a bulk replay, failing again, a claim, retention, a cancel), and failureGroups read
// from them answers what a grouped query over the runs answers, whatever the window. SQLite and PostgreSQL alike.

import { describe, expect, it } from "vitest";
import type { FailureGroupRow, RunPatch, RunRow, Store } from "../../src/storage/store.js";
import { BACKENDS, batch, type Fresh } from "./backends.js";
import { createRun, T0 } from "./fixtures.js";

const DAY = 86_400_000;
const H = 3_600_000;
const A = "aaaaaaaaaaaa";
const B = "bbbbbbbbbbbb";
const C = "cccccccccccc";

const failed = (id: number, sig: string, at: number): RunPatch => ({
  id,
  status: "failed",
  failureSignature: sig,
  finishedAt: at,
  updatedAt: at,
  owner: null,
  leaseUntil: null,
  wakeAt: null,
});
const retrying = (id: number, sig: string, at: number): RunPatch => ({
  id,
  status: "retrying",
  failureSignature: sig,
  finishedAt: null,
  updatedAt: at,
  owner: null,
  leaseUntil: null,
  wakeAt: at + 60_000,
});
/** As a replay writes it: pending again, its signature cleared. */
const replayed = (id: number, at: number): RunPatch => ({
  id,
  status: "pending",
  failureSignature: null,
  error: null,
  finishedAt: null,
  updatedAt: at,
  owner: null,
  leaseUntil: null,
  wakeAt: at,
});

const num = (v: unknown) => Number(v);
const sortRows = (rows: Array<Record<string, number | string>>) =>
  rows.sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));

/** The counts table as it is, and the same grouped from the runs: they must be equal. */
async function countsAndTruth(fresh: Fresh) {
  const table = await fresh.query("SELECT day, signature, workflow, runs, retrying FROM {t}failure_counts");
  const truth = await fresh.query(
    `SELECT coalesce(finished_at, updated_at) / ${DAY} AS day, failure_signature AS signature, workflow,
       count(*) AS runs, sum(CASE WHEN status = 'retrying' THEN 1 ELSE 0 END) AS retrying
     FROM {t}runs WHERE failure_signature IS NOT NULL AND status IN ('failed', 'retrying')
     GROUP BY coalesce(finished_at, updated_at) / ${DAY}, failure_signature, workflow`,
  );
  const norm = (rows: Array<Record<string, unknown>>) =>
    sortRows(
      rows.map((r) => ({
        day: num(r.day),
        signature: String(r.signature),
        workflow: String(r.workflow),
        runs: num(r.runs),
        retrying: num(r.retrying),
      })),
    );
  return { table: norm(table), truth: norm(truth) };
}

/** failureGroups as the grouped query over every run answers it (most runs, then latest failure, first). */
function expectedGroups(
  runs: RunRow[],
  q: { since: number; workflow?: string; signature?: string; limit: number },
): { total: number; groups: FailureGroupRow[] } {
  const byGroup = new Map<string, FailureGroupRow>();
  let total = 0;
  for (const r of runs) {
    const at = r.finishedAt ?? r.updatedAt;
    if (!r.failureSignature || (r.status !== "failed" && r.status !== "retrying") || at < q.since) continue;
    if (q.workflow !== undefined && r.workflow !== q.workflow) continue;
    if (q.signature !== undefined && r.failureSignature !== q.signature) continue;
    total++;
    const id = `${r.failureSignature}|${r.workflow}`;
    const g = byGroup.get(id) ?? {
      signature: r.failureSignature,
      workflow: r.workflow,
      count: 0,
      retrying: 0,
      firstAt: at,
      lastAt: at,
    };
    g.count++;
    if (r.status === "retrying") g.retrying++;
    g.firstAt = Math.min(g.firstAt, at);
    g.lastAt = Math.max(g.lastAt, at);
    byGroup.set(id, g);
  }
  const groups = [...byGroup.values()].sort(
    (x, y) =>
      y.count - x.count ||
      y.lastAt - x.lastAt ||
      x.signature.localeCompare(y.signature) ||
      x.workflow.localeCompare(y.workflow),
  );
  return { total, groups: groups.slice(0, q.limit) };
}

/** After each write: the table equals the runs grouped, and failureGroups answers as the runs do. */
async function check(fresh: Fresh, store: Store, step: string, expectRows: number): Promise<void> {
  const { table, truth } = await countsAndTruth(fresh);
  expect(table, step).toEqual(truth);
  expect(table.length, `${step}: buckets`).toBe(expectRows);
  const runs = await store.listRuns({ limit: 100 });
  const windows = [0, T0, T0 + 1, T0 + DAY + 2 * H, T0 + 2 * DAY, T0 + 2 * DAY + 3 * H, T0 + 3 * DAY + H + 1];
  for (const since of windows) {
    for (const extra of [{}, { workflow: "report" }, { signature: A }, { limit: 1 }] as const) {
      const q = { since, limit: 10, ...extra };
      expect(await store.failureGroups(q), `${step}: ${JSON.stringify(q)}`).toEqual(expectedGroups(runs, q));
    }
  }
}

describe.each(BACKENDS)("$name store: failure counts", (backend) => {
  it("stay the failing runs grouped through fail, bulk replay, fail again, claim, retention and cancel", async () => {
    const fresh = await backend.fresh();
    const store = await fresh.open();
    const runs: RunRow[] = [];
    for (let i = 0; i < 8; i++)
      runs.push(await createRun(store, `r-${i}`, { workflow: i < 6 ? "invoice" : "report" }));
    const id = (i: number) => runs[i]!.id;
    await check(fresh, store, "no failures", 0);

    // Failures over three days, one still retrying; a completed run keeping a signature is never counted.
    await store.commit(
      batch(T0 + 3 * DAY, {
        runs: [
          failed(id(0), A, T0 + H),
          failed(id(1), A, T0 + DAY + 2 * H),
          failed(id(2), A, T0 + 2 * DAY + 3 * H),
          retrying(id(3), A, T0 + DAY + 5 * H),
          failed(id(4), B, T0 + DAY),
          { ...failed(id(5), A, T0 + 2 * H), status: "completed" },
          failed(id(6), A, T0 + 3 * H),
          failed(id(7), B, T0 + 2 * DAY + 3 * H),
        ],
      }),
    );
    // invoice A: day 0, day 1 (failed + retrying), day 2; invoice B: day 1; report A: day 0; report B: day 2.
    await check(fresh, store, "failed", 6);

    // The retrying run gives up a day later: it moves from retrying on day 1 to failed on day 2.
    await store.commit(batch(T0 + 3 * DAY, { runs: [failed(id(3), A, T0 + 2 * DAY + H)] }));
    await check(fresh, store, "retry gave up", 6);

    // A bulk replay of three failed runs in one batch: they stop failing.
    await store.commit(
      batch(T0 + 3 * DAY, {
        runs: [replayed(id(0), T0 + 3 * DAY), replayed(id(1), T0 + 3 * DAY), replayed(id(4), T0 + 3 * DAY)],
      }),
    );
    // invoice A: day 2 (2 runs); report A: day 0; report B: day 2.
    await check(fresh, store, "replayed", 3);

    // They fail again: one with another signature, one with the same, one retrying.
    await store.commit(
      batch(T0 + 3 * DAY + 4 * H, {
        runs: [failed(id(0), C, T0 + 3 * DAY + H), failed(id(1), A, T0 + 3 * DAY + 2 * H)],
      }),
    );
    await store.commit(batch(T0 + 3 * DAY + 4 * H, { runs: [retrying(id(4), B, T0 + 3 * DAY + 4 * H)] }));
    // + invoice C day 3, invoice A day 3, invoice B day 3 (retrying).
    await check(fresh, store, "failed again", 6);

    // A due retrying run claimed by a worker is running, no longer failing; it retries again later.
    const claimed = await store.claimDue(T0 + 4 * DAY, "me", T0 + 4 * DAY + 15_000, 10, ["invoice"]);
    expect(claimed.map((c) => c.id)).toEqual([id(4)]);
    await check(fresh, store, "claimed", 5);
    await store.commit(
      batch(T0 + 4 * DAY + H, {
        runs: [retrying(id(4), B, T0 + 4 * DAY + H)],
        leases: [{ runId: id(4), owner: "me" }],
      }),
    );
    await check(fresh, store, "retrying again", 6);

    // Retention deletes the invoice runs that failed before day 2 noon (runs 2 and 3, both day 2).
    const pruned = await store.pruneRuns(
      [{ workflow: "invoice", status: "failed", finishedBefore: T0 + 2 * DAY + 12 * H }],
      100,
    );
    expect(pruned).toEqual([{ workflow: "invoice", status: "failed", count: 2 }]);
    await check(fresh, store, "pruned", 5);

    // Cancelling the retrying run.
    expect(await store.cancelRun(id(4), T0 + 4 * DAY + 2 * H, "me", JSON.stringify({ by: "test" }))).toBe(
      true,
    );
    await check(fresh, store, "cancelled", 4);
    expect((await store.failureGroups({ since: 0, limit: 10 })).total).toBe(4);
  });
});
