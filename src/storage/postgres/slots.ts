// Concurrency slots on PostgreSQL: claiming limited runs under a per-key lock, and waking queued runs.
//
// IMPORTANT invariant (per workflow and concurrency key): the runs in `running` or `retrying` never number
// more than the limit, across every process. Everything that counts a key's holders and then changes them
// takes a transaction-scoped advisory lock on the key first (pg_advisory_xact_lock of the schema, workflow
// and key; several keys in sorted order, so two transactions cannot wait on each other for them): the claim
// that grants slots, and every commit or cancel that moves a limited run out of running/retrying and wakes
// the queued runs. Under READ COMMITTED each statement after the lock sees what the previous holder of the
// lock committed, so the count is exact and a wake never misses a run parked by a claim that went before.
// A refused run is parked (queued_at set, wake_at cleared) and a slot goes to the oldest queued run first
// (holders plus older queued runs must be below the limit), so runs start in creation order.

import type { ClaimedRun, ConcurrencyQueue, RunStatus } from "../store.js";
import { runColumns, type Tables, TERMINAL_SQL } from "./sql.js";
import type { Query } from "./transaction.js";

/** A due limited run as the claim sees it. */
interface DueRun {
  id: number;
  owner: string | null;
  status: RunStatus;
  workflow: string;
  concurrencyKey: string;
  concurrencyLimit: number;
}

/** The key of a limited run whose slot may have freed. */
export interface SlotKey {
  workflow: string;
  key: string;
  limit: number;
}

/** SQL deciding that a due run needs a slot (limited, neither holding one nor finished). */
export const NEEDS_SLOT = `(concurrency_limit IS NOT NULL AND status NOT IN ('running', 'retrying', 'rolling-back', 'completed', 'failed', 'cancelled'))`;

const LIVE = `status NOT IN ${TERMINAL_SQL}`;

export class PostgresSlots {
  private readonly sql;

  constructor(private readonly t: Tables) {
    const due = `wake_at <= $1 AND (owner IS NULL OR lease_until <= $1) AND (owner IS NULL OR owner <> $2)
      AND ($3::text[] IS NULL OR workflow = ANY($3::text[])) AND ${NEEDS_SLOT}`;
    this.sql = {
      anyDue: `SELECT id FROM ${t.runs} WHERE ${due} LIMIT 1`,
      lockDue: `SELECT id, owner, status, workflow, concurrency_key AS "concurrencyKey",
          concurrency_limit AS "concurrencyLimit" FROM ${t.runs} WHERE ${due}
        ORDER BY wake_at, id LIMIT $4 FOR UPDATE SKIP LOCKED`,
      lockKeys: `SELECT pg_advisory_xact_lock(hashtextextended($1 || chr(31) || u.w || chr(31) || u.k, 0))
        FROM unnest($2::text[], $3::text[]) WITH ORDINALITY AS u(w, k, o) ORDER BY u.o`,
      holders: `SELECT count(*)::int AS n FROM ${t.runs} WHERE workflow = $1 AND concurrency_key = $2
        AND status IN ('running', 'retrying', 'rolling-back') AND id <> $3`,
      holderRows: `SELECT id, workflow, key, status FROM ${t.runs} WHERE workflow = $1 AND concurrency_key = $2
        AND status IN ('running', 'retrying', 'rolling-back') ORDER BY id LIMIT 20`,
      ahead: `SELECT count(*)::int AS n FROM ${t.runs} WHERE workflow = $1 AND concurrency_key = $2
        AND queued_at IS NOT NULL AND ${LIVE} AND id < $3`,
      park: `UPDATE ${t.runs} SET queued_at = coalesce(queued_at, $2), wake_at = NULL WHERE id = $1`,
      wake: `UPDATE ${t.runs} SET wake_at = $4 WHERE wake_at IS NULL AND id IN (SELECT id FROM ${t.runs}
        WHERE workflow = $1 AND concurrency_key = $2 AND queued_at IS NOT NULL AND ${LIVE} ORDER BY id LIMIT $3)`,
      claim: `UPDATE ${t.runs} SET owner = $2, lease_until = $3, wake_at = $3, updated_at = $4, status = 'running',
          waiting = NULL, wait_queues = NULL, wait_runs = NULL, queued_at = NULL
        WHERE id = $1 RETURNING ${runColumns()}`,
      slotOf: `SELECT workflow, concurrency_key AS "concurrencyKey", concurrency_limit AS "concurrencyLimit"
        FROM ${t.runs} WHERE id = $1`,
    };
  }

  /** A cheap look (outside a transaction) for due limited runs that need a slot. */
  async anyDue(q: Query, now: number, owner: string, workflows: string[] | null): Promise<boolean> {
    return (await q("wm_slots_any_due", this.sql.anyDue, [now, owner, workflows])).rows.length > 0;
  }

  /** Inside a transaction: claims up to `limit` due limited runs that get a slot; parks the others. */
  async claim(
    q: Query,
    now: number,
    owner: string,
    leaseUntil: number,
    limit: number,
    workflows: string[] | null,
  ): Promise<{ claimed: ClaimedRun[]; changed: boolean }> {
    const due = (await q<DueRun>("wm_slots_lock_due", this.sql.lockDue, [now, owner, workflows, limit])).rows;
    if (due.length === 0) return { claimed: [], changed: false };
    await this.lockKeys(
      q,
      due.map((d) => ({ workflow: d.workflow, key: d.concurrencyKey, limit: d.concurrencyLimit })),
    );
    const claimed: ClaimedRun[] = [];
    for (const d of due) {
      const holders = await this.count(q, "wm_slots_holders", this.sql.holders, d);
      const ahead = await this.count(q, "wm_slots_ahead", this.sql.ahead, d);
      if (holders + ahead < d.concurrencyLimit) {
        const row = (await q<ClaimedRun>("wm_slots_claim", this.sql.claim, [d.id, owner, leaseUntil, now]))
          .rows[0]!;
        claimed.push({ ...row, takenFrom: d.owner });
        continue;
      }
      await q("wm_slots_park", this.sql.park, [d.id, now]);
      if (holders < d.concurrencyLimit) {
        await q("wm_slots_wake", this.sql.wake, [
          d.workflow,
          d.concurrencyKey,
          d.concurrencyLimit - holders,
          now,
        ]);
      }
    }
    return { claimed, changed: true };
  }

  /** Inside a writing transaction: these keys' runs left running/retrying; wakes the queued runs there is room for. */
  async released(q: Query, keys: SlotKey[], now: number): Promise<void> {
    const unique = await this.lockKeys(q, keys);
    for (const k of unique) {
      const n = await this.count(q, "wm_slots_holders", this.sql.holders, {
        id: -1,
        workflow: k.workflow,
        concurrencyKey: k.key,
      });
      if (n < k.limit) await q("wm_slots_wake", this.sql.wake, [k.workflow, k.key, k.limit - n, now]);
    }
  }

  /** What run `id` waits behind, or null when it has no limit. */
  async queue(q: Query, id: number): Promise<ConcurrencyQueue | null> {
    const run = (
      await q<{ workflow: string; concurrencyKey: string | null; concurrencyLimit: number | null }>(
        "wm_slots_of",
        this.sql.slotOf,
        [id],
      )
    ).rows[0];
    if (!run || run.concurrencyKey === null || run.concurrencyLimit === null) return null;
    const d = { id, workflow: run.workflow, concurrencyKey: run.concurrencyKey };
    const holders = (
      await q<ConcurrencyQueue["holders"][number]>("wm_slots_holder_rows", this.sql.holderRows, [
        run.workflow,
        run.concurrencyKey,
      ])
    ).rows
      .map((h) => ({ ...h, id: Number(h.id) }))
      .filter((h) => h.id !== id);
    return {
      key: run.concurrencyKey,
      limit: run.concurrencyLimit,
      holders,
      holderCount: await this.count(q, "wm_slots_holders", this.sql.holders, d),
      ahead: await this.count(q, "wm_slots_ahead", this.sql.ahead, d),
    };
  }

  /** Takes the advisory locks of these keys in sorted order; returns the keys once each, in that order. */
  private async lockKeys(q: Query, keys: SlotKey[]): Promise<SlotKey[]> {
    const byName = new Map<string, SlotKey>();
    for (const k of keys) byName.set(`${k.workflow}\u001f${k.key}`, k);
    const names = [...byName.keys()].sort();
    const unique = names.map((n) => byName.get(n)!);
    await q("wm_slots_lock_keys", this.sql.lockKeys, [
      this.t.runs,
      unique.map((k) => k.workflow),
      unique.map((k) => k.key),
    ]);
    return unique;
  }

  private async count(
    q: Query,
    name: string,
    text: string,
    d: { id: number; workflow: string; concurrencyKey: string },
  ): Promise<number> {
    return (await q<{ n: number }>(name, text, [d.workflow, d.concurrencyKey, d.id])).rows[0]!.n;
  }
}
