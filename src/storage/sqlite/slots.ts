// Concurrency slots on SQLite: which claims a limited run may take, and waking the runs queued for a slot.
//
// IMPORTANT invariant (per workflow and concurrency key): the runs in `running` or `retrying` never number
// more than the limit. It holds because every way into those statuses goes through claimDue, which counts
// the holders and claims in one IMMEDIATE transaction (SQLite has one writer, so no other claim or commit
// interleaves). A run refused a slot is parked: queued_at set, wake_at cleared (so it costs the scheduler
// nothing). Whatever takes a run out of running/retrying (a commit's patch, cancelRun) wakes the oldest
// queued runs of its key, as many as slots are free, in the same transaction: a freed slot is never lost.
// A slot goes to the oldest queued run first: a run may take one only while holders plus older queued
// runs are below the limit, so runs start in creation order.

import type Database from "better-sqlite3";
import type { ConcurrencyQueue, RunStatus } from "../store.js";
import { numbered, onFirstUse, pluck } from "./statements.js";

const LIVE = "status NOT IN ('completed', 'failed', 'cancelled')";

/** A due run as the claim sees it. */
export interface DueRun {
  id: number;
  owner: string | null;
  status: RunStatus;
  workflow: string;
  concurrencyKey: string | null;
  concurrencyLimit: number | null;
}

/** True when claiming this run would take a slot (a limited run not already holding one nor finished). */
export function needsSlot(d: DueRun): boolean {
  return (
    d.concurrencyLimit !== null &&
    d.concurrencyKey !== null &&
    !["running", "retrying", "rolling-back", "completed", "failed", "cancelled"].includes(d.status)
  );
}

/** A run's concurrency key and limit (null without a limit), with its workflow. */
export interface SlotOf {
  workflow: string;
  concurrencyKey: string | null;
  concurrencyLimit: number | null;
}

export class SqliteSlots {
  private readonly s;

  constructor(db: Database.Database) {
    this.s = onFirstUse(db, {
      holders: pluck(`SELECT count(*) FROM runs WHERE workflow = ?1 AND concurrency_key = ?2
        AND status IN ('running', 'retrying', 'rolling-back') AND id != ?3`),
      holderRows: `SELECT id, workflow, key, status FROM runs WHERE workflow = ?1 AND concurrency_key = ?2
        AND status IN ('running', 'retrying', 'rolling-back') ORDER BY id LIMIT 20`,
      ahead: pluck(`SELECT count(*) FROM runs WHERE workflow = ?1 AND concurrency_key = ?2
        AND queued_at IS NOT NULL AND ${LIVE} AND id < ?3`),
      park: "UPDATE runs SET queued_at = coalesce(queued_at, ?2), wake_at = NULL WHERE id = ?1",
      wake: `UPDATE runs SET wake_at = ?4 WHERE wake_at IS NULL AND id IN (SELECT id FROM runs
        WHERE workflow = ?1 AND concurrency_key = ?2 AND queued_at IS NOT NULL AND ${LIVE} ORDER BY id LIMIT ?3)`,
      slotOf: `SELECT workflow, key, concurrency_key AS concurrencyKey, concurrency_limit AS concurrencyLimit
        FROM runs WHERE id = ?`,
    });
  }

  /**
   * Inside the claim's transaction: true when `d` may take a slot now. Otherwise parks it (queued for a
   * slot, not due) and makes sure the runs queued ahead of it that fit the free slots are due.
   */
  grant(d: DueRun, now: number): boolean {
    const key = d.concurrencyKey!;
    const limit = d.concurrencyLimit!;
    const holders = this.s.holders.get(numbered(d.workflow, key, d.id)) as number;
    const ahead = this.s.ahead.get(numbered(d.workflow, key, d.id)) as number;
    if (holders + ahead < limit) return true;
    this.s.park.run(numbered(d.id, now));
    if (holders < limit) this.s.wake.run(numbered(d.workflow, key, limit - holders, now));
    return false;
  }

  /** Inside a writing transaction: run `id` left running/retrying; wakes the queued runs its key has room for. */
  released(id: number, now: number): void {
    const run = this.s.slotOf.get(id) as SlotOf | undefined;
    if (run) this.releasedBy(run, now);
  }

  /** As released, given the run's workflow and limit (read by the write that took it out of its slot). */
  releasedBy(run: SlotOf, now: number): void {
    if (run.concurrencyKey === null || run.concurrencyLimit === null) return;
    const holders = this.s.holders.get(numbered(run.workflow, run.concurrencyKey, -1)) as number;
    if (holders < run.concurrencyLimit)
      this.s.wake.run(numbered(run.workflow, run.concurrencyKey, run.concurrencyLimit - holders, now));
  }

  /** What run `id` waits behind, or null when its workflow has no limit. */
  queue(id: number): ConcurrencyQueue | null {
    const run = this.s.slotOf.get(id) as
      | { workflow: string; concurrencyKey: string | null; concurrencyLimit: number | null }
      | undefined;
    if (!run || run.concurrencyKey === null || run.concurrencyLimit === null) return null;
    const holders = this.s.holderRows.all(
      numbered(run.workflow, run.concurrencyKey),
    ) as ConcurrencyQueue["holders"];
    return {
      key: run.concurrencyKey,
      limit: run.concurrencyLimit,
      holders: holders.filter((h) => h.id !== id),
      holderCount: (this.s.holders.get(numbered(run.workflow, run.concurrencyKey, id)) as number) ?? 0,
      ahead: this.s.ahead.get(numbered(run.workflow, run.concurrencyKey, id)) as number,
    };
  }
}
