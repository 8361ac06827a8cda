// Store conformance, retention: countExpired and pruneRuns delete exactly the runs their rules cover (finished
// before the cutoff, of that workflow and status) with every row of theirs, keep a child of an unfinished parent
// and a run with a pending request, leave no link dangling, and stop at the limit, oldest first.
// SQLite and PostgreSQL alike.

import Database from "better-sqlite3";
import pg from "pg";
import { describe, expect, it } from "vitest";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { pruneStatements } from "../../src/storage/postgres/prune.js";
import { tables } from "../../src/storage/postgres/sql.js";
import { EXPIRED_SQL } from "../../src/storage/sqlite/prune.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { RetentionRule, RunRow, RunStatus, Store } from "../../src/storage/store.js";
import { onCleanup, tempDb } from "../helpers.js";
import { PG_URL, tempSchema } from "../postgres/pg.js";
import { BACKENDS, batch } from "./backends.js";
import { createRun, entry, newRuns, send, T0 } from "./fixtures.js";

const CUTOFF = T0 + 500;
const rules = (workflow = "wf"): RetentionRule[] => [
  { workflow, status: "completed", finishedBefore: CUTOFF },
  { workflow, status: "failed", finishedBefore: CUTOFF },
];

/** Ends a run with `status` at `at`, as the engine does. */
async function finish(store: Store, run: RunRow, status: RunStatus, at: number): Promise<void> {
  await store.commit(
    batch(at, { runs: [{ id: run.id, status, finishedAt: at, updatedAt: at, owner: null, wakeAt: null }] }),
  );
}

describe.each(BACKENDS)("$name store: retention", (backend) => {
  it("deletes exactly the expired runs with their entries, messages, requests and refusals", async () => {
    const store = await (await backend.fresh()).open();
    const old = await createRun(store, "old");
    await store.commit(
      batch(T0 + 1, {
        entries: [entry(old.id, 1), entry(old.id, 2)],
        requests: [{ runId: old.id, kind: "cancel", args: "{}" }],
        rejections: [{ runId: old.id, queue: "q", body: "{}", error: "bad", at: T0 + 1 }],
      }),
    );
    const [requestId] = (await store.pendingRequests([old.id], 10)).map((r) => r.id);
    await store.commit(batch(T0 + 2, { requestsDone: [{ id: requestId!, result: '{"ok":true}' }] }));
    const consumed = await send(store, old.id, "q", { n: 1 });
    await store.commit(batch(T0 + 3, { consume: [{ messageId: consumed.id, runId: old.id, bySeq: 2 }] }));
    await send(store, old.id, "q", { n: 2 });
    await finish(store, old, "completed", T0 + 10);

    const failed = await createRun(store, "failed");
    await finish(store, failed, "failed", T0 + 20);
    const cancelled = await createRun(store, "cancelled");
    await finish(store, cancelled, "cancelled", T0 + 30); // no rule for cancelled: kept
    const recent = await createRun(store, "recent");
    await finish(store, recent, "completed", CUTOFF); // finished at the cutoff, not before: kept
    const live = await createRun(store, "live"); // unfinished: kept
    const other = await createRun(store, "other", { workflow: "other" });
    await finish(store, other, "completed", T0 + 10); // another workflow's rule: kept
    const keep = await createRun(store, "keep");
    await store.commit(batch(T0 + 40, { entries: [entry(keep.id, 1)] }));

    expect(await store.countExpired(rules())).toEqual([
      { workflow: "wf", status: "completed", count: 1 },
      { workflow: "wf", status: "failed", count: 1 },
    ]);
    const deleted = await store.pruneRuns(rules(), 100);
    expect(deleted).toEqual([
      { workflow: "wf", status: "completed", count: 1 },
      { workflow: "wf", status: "failed", count: 1 },
    ]);
    expect(await store.getRun(old.id)).toBeUndefined();
    expect(await store.getRun(failed.id)).toBeUndefined();
    expect(await store.allEntries(old.id)).toEqual([]);
    expect(await store.listMessages(old.id, { includeConsumed: true, limit: 10 })).toEqual([]);
    expect(await store.getMessage(consumed.id)).toBeUndefined();
    expect(await store.getRequest(requestId!)).toBeUndefined();
    expect(await store.listRejections(old.id, 10)).toEqual([]);
    const left = (await store.getRuns([cancelled.id, recent.id, live.id, other.id, keep.id])).map(
      (r) => r.key,
    );
    expect(left.sort()).toEqual(["cancelled", "keep", "live", "other", "recent"]);
    expect(await store.allEntries(keep.id)).toHaveLength(1);
    expect(await store.countExpired(rules())).toEqual([]);
    expect(await store.pruneRuns(rules(), 100)).toEqual([]);
  });

  it("keeps a child of an unfinished parent and a run with a pending request; unlinks a pruned parent's children", async () => {
    const store = await (await backend.fresh()).open();
    const parent = await createRun(store, "parent"); // still running
    const child = await createRun(store, "child", { parentRunId: parent.id });
    await finish(store, child, "completed", T0 + 10);
    const asked = await createRun(store, "asked");
    await finish(store, asked, "failed", T0 + 10);
    await store.commit(batch(T0 + 11, { requests: [{ runId: asked.id, kind: "replay", args: "{}" }] }));
    const done = await createRun(store, "done-parent");
    const detached = await createRun(store, "detached", { parentRunId: done.id }); // unfinished child
    const doneChild = await createRun(store, "done-child", { parentRunId: done.id });
    await finish(store, doneChild, "completed", T0 + 15);
    await finish(store, done, "completed", T0 + 20);

    expect(await store.countExpired(rules())).toEqual([{ workflow: "wf", status: "completed", count: 2 }]);
    expect(await store.pruneRuns(rules(), 100)).toEqual([{ workflow: "wf", status: "completed", count: 2 }]);
    expect(await store.getRun(child.id)).toMatchObject({ parentRunId: parent.id });
    expect(await store.getRun(asked.id)).toMatchObject({ status: "failed" });
    expect(await store.getRun(done.id)).toBeUndefined();
    expect(await store.getRun(doneChild.id)).toBeUndefined();
    expect(await store.getRun(detached.id)).toMatchObject({ parentRunId: null });

    // Once the parent ends, its child is expired like any other.
    await finish(store, parent, "completed", CUTOFF + 1);
    expect(await store.pruneRuns(rules(), 100)).toEqual([{ workflow: "wf", status: "completed", count: 1 }]);
    expect(await store.getRun(child.id)).toBeUndefined();
  });

  it("clears a schedule's last run when it is pruned", async () => {
    const store = await (await backend.fresh()).open();
    await store.syncSchedules([{ name: "hourly", workflow: "wf", spec: '{"every":"1h"}', nextDue: T0 }], T0);
    const creates = [
      { workflow: "wf", key: "hourly@1", version: 1, input: null, initialState: "{}", now: T0 },
    ].map((c) => ({ ...c, owner: null, leaseUntil: null }));
    const fired = await store.advanceSchedule(
      { name: "hourly", expected: T0, next: T0 + 3_600_000, fired: { due: T0, outcome: "started" }, now: T0 },
      batch(T0, { creates }),
    );
    const run = fired!.created[0]!.run;
    expect((await store.schedules())[0]!.lastRunId).toBe(run.id);
    await finish(store, run, "completed", T0 + 10);
    await store.pruneRuns(rules(), 100);
    expect((await store.schedules())[0]).toMatchObject({ lastRunId: null, lastOutcome: "started" });
  });

  it("deletes at most `limit` runs per call, the longest finished first", async () => {
    const store = await (await backend.fresh()).open();
    for (let i = 0; i < 5; i++) {
      const run = await createRun(store, `r${i}`);
      await finish(store, run, "completed", T0 + 100 - i); // r4 finished first
    }
    expect(await store.pruneRuns(rules(), 2)).toEqual([{ workflow: "wf", status: "completed", count: 2 }]);
    const left = await store.listRuns({ limit: 10 });
    expect(left.map((r) => r.key).sort()).toEqual(["r0", "r1", "r2"]);
    expect(await store.pruneRuns(rules(), 2)).toEqual([{ workflow: "wf", status: "completed", count: 2 }]);
    expect(await store.pruneRuns(rules(), 2)).toEqual([{ workflow: "wf", status: "completed", count: 1 }]);
    expect(await store.listRuns({ limit: 10 })).toEqual([]);
  });

  it("names, per rule, the earliest finish at or after its cutoff: the next run to expire", async () => {
    const store = await (await backend.fresh()).open();
    for (const [key, at] of [
      ["a", CUTOFF - 1],
      ["b", CUTOFF],
      ["c", CUTOFF + 7],
    ] as const) {
      await finish(store, await createRun(store, key), "completed", at);
    }
    await createRun(store, "live");
    expect(await store.nextToExpire(rules())).toEqual([CUTOFF, null]);
    expect(
      await store.nextToExpire([{ workflow: "wf", status: "completed", finishedBefore: CUTOFF + 1 }]),
    ).toEqual([CUTOFF + 7]);
    expect(await store.nextToExpire(rules("nothing"))).toEqual([null, null]);
  });
});

/** 3,000 runs of two workflows, most finished after the cutoff or not finished, so a plan that scans would show. */
async function fill(store: Store): Promise<void> {
  const keys = Array.from({ length: 3000 }, (_, i) => `k-${i}`);
  const creates = newRuns(keys, (i) => (i % 3 ? "wf" : "other"));
  const res = await store.commit(batch(T0, { creates }));
  const runs = res.created.map((c, i) =>
    i % 4 === 0
      ? { id: c.run.id, status: "running" as const }
      : { id: c.run.id, status: "completed" as const, finishedAt: i % 50 === 1 ? T0 + i : CUTOFF + i },
  );
  await store.commit(batch(T0 + 20_000, { runs }));
}

describe("finding expired runs is a range read of runs_finished", () => {
  it("SQLite searches runs_finished by workflow, status and finish time", async () => {
    const path = tempDb();
    const store = openSqliteStore(path);
    onCleanup(() => store.close());
    await fill(store);
    const db = new Database(path);
    onCleanup(() => {
      db.close();
    });
    const plan = () =>
      (
        db.prepare(`EXPLAIN QUERY PLAN ${EXPIRED_SQL}`).all("wf", "completed", CUTOFF, 100) as Array<{
          detail: string;
        }>
      )
        .map((r) => r.detail)
        .join("\n");
    for (const analyse of [false, true]) {
      if (analyse) db.exec("ANALYZE");
      expect(plan()).toMatch(
        /SEARCH r USING INDEX runs_finished \(workflow=\? AND status=\? AND finished_at<\?\)/,
      );
      expect(plan()).not.toMatch(/SCAN|TEMP B-TREE/);
    }
  });

  it("PostgreSQL scans runs_finished, no sequential scan of runs", async () => {
    const { schema, url } = await tempSchema();
    const store = await openPostgresStore(url);
    onCleanup(() => store.close());
    await fill(store);
    const client = new pg.Client({ connectionString: PG_URL });
    await client.connect();
    onCleanup(() => client.end());
    await client.query(`ANALYZE "${schema}".runs`);
    const text = pruneStatements(tables(`"${schema}"`)).select;
    const plan = (await client.query(`EXPLAIN ${text}`, ["wf", "completed", CUTOFF, 100])).rows
      .map((r: Record<string, string>) => Object.values(r)[0])
      .join("\n");
    // A plain or bitmap index scan: either reads only the range of expired entries.
    expect(plan).toMatch(/(Index Scan using|Bitmap Index Scan on) runs_finished/);
    expect(plan).not.toMatch(/Seq Scan on runs/);
  });
});
