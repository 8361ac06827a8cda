// Small builders for store tests: runs, entries and messages written through `commit`, as the engine writes them.

import type Database from "better-sqlite3";
import { expect } from "vitest";
import { errorSearch, readRuns, runsQuery } from "../../src/storage/sqlite/run-queries.js";
import type { CreateRun, EntryRow, RunQuery, RunRow, Store } from "../../src/storage/store.js";
import { batch } from "./backends.js";

export const T0 = Date.UTC(2026, 0, 1);

export async function createRun(
  store: Store,
  key: string,
  options: {
    workflow?: string;
    now?: number;
    owner?: string;
    leaseUntil?: number;
    input?: string;
    parentRunId?: number;
    version?: number;
  } = {},
): Promise<RunRow> {
  const now = options.now ?? T0;
  const res = await store.commit(
    batch(now, {
      creates: [
        {
          workflow: options.workflow ?? "wf",
          key,
          version: options.version ?? 1,
          input: options.input ?? null,
          initialState: '{"n":0}',
          now,
          owner: options.owner ?? null,
          leaseUntil: options.owner ? (options.leaseUntil ?? now + 15_000) : null,
          ...(options.parentRunId !== undefined ? { parentRunId: options.parentRunId } : {}),
        },
      ],
    }),
  );
  return res.created[0]!.run;
}

export function entry(runId: number, seq: number, over: Partial<EntryRow> = {}): EntryRow {
  return {
    runId,
    seq,
    scope: "",
    ordinal: seq - 1,
    name: `s${seq}`,
    kind: "step",
    status: "completed",
    startedAt: T0 + seq,
    endedAt: T0 + seq + 1,
    input: null,
    output: JSON.stringify(seq),
    error: null,
    attempts: null,
    detail: null,
    stateSeq: null,
    stateDiff: null,
    ...over,
  };
}

export async function send(
  store: Store,
  runId: number,
  queue: string,
  body: unknown,
  now = T0,
  idempotencyKey: string | null = null,
) {
  const res = await store.commit(
    batch(now, { messages: [{ runId, queue, body: JSON.stringify(body), idempotencyKey, now }] }),
  );
  return res.messages[0]!;
}

/** Suspends a run as the engine does: status, what it waits on, wake-up, lease released. */
export async function suspend(
  store: Store,
  run: RunRow,
  owner: string,
  now: number,
  patch: {
    status?: "waiting" | "sleeping";
    waitQueues?: string | null;
    waitRuns?: string | null;
    wakeAt?: number | null;
  },
) {
  await store.commit(
    batch(now, {
      runs: [
        {
          id: run.id,
          status: patch.status ?? "waiting",
          waiting: "[]",
          waitQueues: patch.waitQueues ?? null,
          ...(patch.waitRuns !== undefined ? { waitRuns: patch.waitRuns } : {}),
          wakeAt: patch.wakeAt ?? null,
          owner: null,
          leaseUntil: null,
          updatedAt: now,
        },
      ],
      leases: [{ runId: run.id, owner }],
    }),
  );
}

/** Creates one run per entry of `errors` (created 1 ms apart, in order) and fails each with its error. */
export async function failedRuns(
  store: Store,
  errors: Array<[string, string]>,
  workflow = "wf",
): Promise<RunRow[]> {
  const created = await store.commit(
    batch(T0, {
      creates: newRuns(
        errors.map(([key]) => key),
        () => workflow,
      ),
    }),
  );
  const runs = created.created.map((c) => c.run);
  await store.commit(
    batch(T0 + 10_000, {
      runs: runs.map((r, i) => ({
        id: r.id,
        status: "failed" as const,
        error: errors[i]![1],
        finishedAt: T0 + 10_000,
        updatedAt: T0 + 10_000,
      })),
    }),
  );
  return runs;
}

/** Every page of `q`, following the cursor from the last run of each. */
export async function allPages(store: Store, q: RunQuery): Promise<string[]> {
  const out: string[] = [];
  let before: RunQuery["before"];
  for (;;) {
    const page = await store.listRuns({ ...q, ...(before ? { before } : {}) });
    out.push(...page.map((r) => r.key));
    if (page.length < q.limit) return out;
    const last = page.at(-1)!;
    before = { createdAt: last.createdAt, id: last.id };
  }
}

/** Creates for one run per key, created 1 ms apart from T0 in order, unclaimed, of `workflowOf(i)`. */
export function newRuns(keys: string[], workflowOf: (i: number) => string = () => "wf"): CreateRun[] {
  return keys.map((key, i) => ({
    workflow: workflowOf(i),
    key,
    version: 1,
    input: null,
    initialState: "{}",
    now: T0 + i,
    owner: null,
    leaseUntil: null,
  }));
}

/**
 * SQLite: the error search `q` answers as its scan plan does, and so do its "few" and "many" plans with the
 * candidates it found; adds the plan it chose to `plans`.
 */
export function expectPlansAgree(db: Database.Database, q: RunQuery, plans: Set<string>): void {
  const search = errorSearch(db, q);
  plans.add(search.plan);
  const { sql, args } = runsQuery(q, "scan");
  const scan = db.prepare(sql).all(...args);
  expect(readRuns(db, q), `${q.errorContains} ${q.limit}`).toEqual(scan);
  for (const plan of ["few", "many"] as const) {
    const { sql, args } = runsQuery(q, plan, undefined, search.match);
    expect(db.prepare(sql).all(...args), `${q.errorContains} ${plan}`).toEqual(scan);
  }
}
