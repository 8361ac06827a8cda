// One WriteBatch as one PostgreSQL transaction: a handful of set-based statements (unnest arrays), not
// one round trip per row, so a group commit of many runs costs about as much as one run's.
//
// IMPORTANT: every run the batch touches is locked first, in id order (SELECT ... FOR UPDATE), which
// makes the lease check atomic with the writes, orders concurrent batches so they cannot deadlock, and
// serialises a message insert with its run's suspension (one of the two always sees the other, so the
// wake-up cannot be lost). The order of the writes follows the SQLite store's.

import type pg from "pg";
import { LeaseLostError, StorageError } from "../../errors.js";
import {
  type BatchResult,
  type CreateResult,
  type EntryRow,
  type MessageResult,
  type RunPatch,
  type RunRow,
  SLOT_STATUSES,
  type TagRow,
  type WriteBatch,
} from "../store.js";
import { PostgresSlots, type SlotKey } from "./slots.js";
import { PATCH_COLUMNS, pgText, runColumns, type Tables, TERMINAL_SQL } from "./sql.js";

const TERMINAL: ReadonlySet<string> = new Set(["completed", "failed", "cancelled"]);

type Query = <R extends pg.QueryResultRow = any>(
  name: string,
  text: string,
  values: unknown[],
) => Promise<pg.QueryResult<R>>;

/** Statements prepared per connection (by name); the dynamic ones are keyed by their shape. */
export class BatchWriter {
  private readonly sql;
  private readonly patchSql = new Map<string, { name: string; text: string }>();

  private readonly slots: PostgresSlots;

  constructor(private readonly t: Tables) {
    this.slots = new PostgresSlots(t);
    const RUN = runColumns();
    this.sql = {
      lock: `SELECT id, owner, workflow, concurrency_key AS "key", concurrency_limit AS "limit" FROM ${t.runs}
        WHERE id = ANY($1::bigint[]) ORDER BY id FOR UPDATE`,
      parents: `SELECT DISTINCT parent_run_id AS id FROM ${t.runs}
        WHERE id = ANY($1::bigint[]) AND parent_run_id IS NOT NULL`,
      wakeIfChildEnded: `UPDATE ${t.runs} r SET wake_at = $1 FROM unnest($2::bigint[], $3::text[]) AS p(id, runs)
        WHERE r.id = p.id AND EXISTS (SELECT 1 FROM ${t.runs} c WHERE c.parent_run_id = p.id
          AND c.status IN ${TERMINAL_SQL} AND strpos(p.runs, '|' || c.id || '|') > 0)`,
      wakeParents: `UPDATE ${t.runs} p SET wake_at = $1 FROM ${t.runs} c
        WHERE c.id = ANY($2::bigint[]) AND p.id = c.parent_run_id AND p.owner IS NULL
          AND strpos(p.wait_runs, '|' || c.id || '|') > 0 AND (p.wake_at IS NULL OR p.wake_at > $1)`,
      create: `INSERT INTO ${t.runs} (workflow, key, version, status, input, initial_state, state, wake_at, owner,
          lease_until, created_at, updated_at, trace_context, parent_run_id, concurrency_key, concurrency_limit)
        SELECT c.workflow, c.key, c.version, c.status, c.input, c.initial_state, c.initial_state, c.wake_at, c.owner,
          c.lease_until, c.now, c.now, c.trace_context, c.parent_run_id, c.concurrency_key, c.concurrency_limit
        FROM unnest($1::text[], $2::text[], $3::int[], $4::text[], $5::text[], $6::text[], $7::bigint[], $8::text[],
          $9::bigint[], $10::bigint[], $11::text[], $12::bigint[], $13::text[], $14::int[]) WITH ORDINALITY
          AS c(workflow, key, version, status, input, initial_state, wake_at, owner, lease_until, now, trace_context,
            parent_run_id, concurrency_key, concurrency_limit, ord)
        ORDER BY c.ord
        ON CONFLICT (workflow, key) DO NOTHING RETURNING ${RUN}`,
      existing: `SELECT ${RUN} FROM ${t.runs} WHERE (workflow, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      deleteEntries: `DELETE FROM ${t.entries} e USING unnest($1::bigint[], $2::bigint[]) AS d(run_id, seq)
        WHERE e.run_id = d.run_id AND e.seq = d.seq`,
      upsertEntries: `INSERT INTO ${t.entries} (run_id, seq, scope, ordinal, name, kind, status, started_at, ended_at,
          input, output, error, attempts, detail, state_seq, state_diff)
        SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[],
          $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[],
          $16::text[])
        ON CONFLICT (run_id, seq) DO UPDATE SET scope = excluded.scope, ordinal = excluded.ordinal,
          name = excluded.name, kind = excluded.kind, status = excluded.status, started_at = excluded.started_at,
          ended_at = excluded.ended_at, input = excluded.input, output = excluded.output, error = excluded.error,
          attempts = excluded.attempts, detail = excluded.detail, state_seq = excluded.state_seq,
          state_diff = excluded.state_diff`,
      unconsume: `UPDATE ${t.messages} SET consumed_at = NULL, consumed_by = NULL WHERE id = ANY($1::bigint[])`,
      consume: `UPDATE ${t.messages} m SET consumed_at = $1, consumed_by = c.by
        FROM unnest($2::bigint[], $3::bigint[], $4::bigint[]) AS c(id, run_id, by)
        WHERE m.id = c.id AND m.run_id = c.run_id AND m.consumed_at IS NULL RETURNING m.id`,
      wakeIfMessageWaiting: `UPDATE ${t.runs} r SET wake_at = $1 FROM unnest($2::bigint[], $3::text[]) AS p(id, queues)
        WHERE r.id = p.id AND EXISTS (SELECT 1 FROM ${t.messages} m WHERE m.run_id = p.id AND m.consumed_at IS NULL
          AND strpos(p.queues, '|' || m.queue || '|') > 0)`,
      messageIds: `SELECT nextval(${t.messagesSeq}) AS id FROM generate_series(1, $1) ORDER BY 1`,
      insertMessages: `INSERT INTO ${t.messages} (id, run_id, queue, body, sent_at, idempotency_key)
        SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[]) AS m
        ORDER BY 1
        ON CONFLICT (run_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING RETURNING id`,
      messagesByKey: `SELECT id, run_id AS "runId", idempotency_key AS "key" FROM ${t.messages}
        WHERE (run_id, idempotency_key) IN (SELECT * FROM unnest($1::bigint[], $2::text[]))`,
      wakeForMessages: `UPDATE ${t.runs} r SET wake_at = $1
        FROM (SELECT DISTINCT * FROM unnest($2::bigint[], $3::text[])) AS m(run_id, queue)
        WHERE r.id = m.run_id AND r.owner IS NULL AND strpos(r.wait_queues, '|' || m.queue || '|') > 0
          AND (r.wake_at IS NULL OR r.wake_at > $1)`,
      requestIds: `SELECT nextval(${t.requestsSeq}) AS id FROM generate_series(1, $1) ORDER BY 1`,
      insertRequests: `INSERT INTO ${t.requests} (id, run_id, kind, args, created_at)
        SELECT r.id, r.run_id, r.kind, r.args, $5 FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[])
          AS r(id, run_id, kind, args)`,
      wakeForRequests: `UPDATE ${t.runs} SET wake_at = $1 WHERE id = ANY($2::bigint[]) AND owner IS NULL
        AND (wake_at IS NULL OR wake_at > $1)`,
      requestsDone: `UPDATE ${t.requests} r SET done_at = $1, result = d.result
        FROM unnest($2::bigint[], $3::text[]) AS d(id, result) WHERE r.id = d.id`,
      // The run's created_at goes with the tag (the index orders a tag's runs by it); no such run: no row.
      setTags: `INSERT INTO ${t.runTags} (run_id, name, value, run_created_at)
        SELECT x.run_id, x.name, x.value, r.created_at
        FROM unnest($1::bigint[], $2::text[], $3::text[]) AS x(run_id, name, value) JOIN ${t.runs} r ON r.id = x.run_id
        ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value`,
      rejections: `INSERT INTO ${t.rejections} (run_id, queue, body, error, at)
        SELECT j.run_id, j.queue, j.body, j.error, j.at
        FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::bigint[]) WITH ORDINALITY
          AS j(run_id, queue, body, error, at, ord)
        ORDER BY j.ord`,
    };
  }

  /**
   * True when a batch only writes history entries of runs this process holds without doubt: one
   * statement is then atomic on its own, and nothing in it concerns another process (no NOTIFY).
   */
  static entriesOnly(b: WriteBatch): boolean {
    return (
      b.entries.length > 0 &&
      b.leases.length === 0 &&
      b.creates.length === 0 &&
      b.messages.length === 0 &&
      b.runs.length === 0 &&
      b.consume.length === 0 &&
      b.unconsume.length === 0 &&
      b.deleteEntries.length === 0 &&
      b.requests.length === 0 &&
      b.requestsDone.length === 0 &&
      b.rejections.length === 0 &&
      b.tags.length === 0
    );
  }

  /** Applies a batch inside an open transaction; throws (and the caller rolls back) on a lost lease. */
  async apply(q: Query, batch: WriteBatch): Promise<BatchResult> {
    const s = this.sql;
    const now = batch.now;
    const limited = await this.lockAndCheck(q, batch);

    const created = batch.creates.length ? await this.create(q, batch) : [];

    const delRuns: number[] = [];
    const delSeqs: number[] = [];
    for (const d of batch.deleteEntries) {
      for (const seq of d.seqs) {
        delRuns.push(d.runId);
        delSeqs.push(seq);
      }
    }
    if (delRuns.length) await q("wm_delete_entries", s.deleteEntries, [delRuns, delSeqs]);
    if (batch.entries.length) await this.upsertEntries(q, batch.entries);
    if (batch.unconsume.length) await q("wm_unconsume", s.unconsume, [batch.unconsume]);
    if (batch.consume.length) await this.consume(q, batch, now);
    if (batch.runs.length) await this.patchRuns(q, batch.runs, now);
    const tags = [...tagsOfCreated(batch, created), ...batch.tags];
    if (tags.length) await this.setTags(q, tags);
    // Runs of limited workflows out of running/retrying: their keys' queued runs may take the slots.
    const freed = batch.runs.filter(
      (p) => p.status && !SLOT_STATUSES.includes(p.status) && limited.has(p.id),
    );
    if (freed.length)
      await this.slots.released(
        q,
        freed.map((p) => limited.get(p.id)!),
        now,
      );

    const messages = batch.messages.length ? await this.insertMessages(q, batch, now) : [];

    let requests: number[] = [];
    if (batch.requests.length) {
      const ids = await q<{ id: number }>("wm_request_ids", s.requestIds, [batch.requests.length]);
      requests = ids.rows.map((r) => r.id);
      const runIds = batch.requests.map((r) => r.runId);
      await q("wm_insert_requests", s.insertRequests, [
        requests,
        runIds,
        batch.requests.map((r) => pgText(r.kind)),
        batch.requests.map((r) => r.args),
        now,
      ]);
      await q("wm_wake_for_requests", s.wakeForRequests, [now, [...new Set(runIds)]]);
    }
    if (batch.requestsDone.length) {
      await q("wm_requests_done", s.requestsDone, [
        now,
        batch.requestsDone.map((d) => d.id),
        batch.requestsDone.map((d) => d.result),
      ]);
    }
    if (batch.rejections.length) {
      const r = batch.rejections;
      await q("wm_rejections", s.rejections, [
        r.map((x) => x.runId),
        r.map((x) => pgText(x.queue)),
        r.map((x) => pgText(x.body)),
        r.map((x) => pgText(x.error)),
        r.map((x) => x.at),
      ]);
    }
    return { created, messages, requests };
  }

  /**
   * Locks every run the batch writes, in id order, and checks the batch's leases against their owners.
   * Returns the concurrency key of each limited run locked (by id).
   */
  private async lockAndCheck(q: Query, batch: WriteBatch): Promise<Map<number, SlotKey>> {
    const ids = new Set<number>();
    for (const l of batch.leases) ids.add(l.runId);
    for (const p of batch.runs) ids.add(p.id);
    for (const e of batch.entries) ids.add(e.runId);
    for (const d of batch.deleteEntries) ids.add(d.runId);
    for (const c of batch.consume) ids.add(c.runId);
    for (const m of batch.messages) ids.add(m.runId);
    for (const r of batch.requests) ids.add(r.runId);
    for (const t of batch.tags) ids.add(t.runId);
    const limited = new Map<number, SlotKey>();
    if (ids.size === 0) return limited;
    // A run that ends wakes its parent: the parent is locked too, so its suspension sees the end or is seen.
    const ending = batch.runs.filter((p) => p.status && TERMINAL.has(p.status)).map((p) => p.id);
    if (ending.length) {
      const parents = await q<{ id: number }>("wm_parents", this.sql.parents, [ending]);
      for (const r of parents.rows) ids.add(Number(r.id));
    }
    const { rows } = await q<{
      id: number;
      owner: string | null;
      workflow: string;
      key: string | null;
      limit: number | null;
    }>("wm_lock_runs", this.sql.lock, [[...ids]]);
    for (const r of rows) {
      if (r.key !== null && r.limit !== null)
        limited.set(Number(r.id), { workflow: r.workflow, key: r.key, limit: r.limit });
    }
    if (batch.leases.length === 0) return limited;
    const owners = new Map(rows.map((r) => [r.id, r.owner]));
    for (const lease of batch.leases) {
      const owner = owners.get(lease.runId);
      if (owner !== lease.owner) throw new LeaseLostError(lease.runId, owner ?? null);
    }
    return limited;
  }

  private async create(q: Query, batch: WriteBatch): Promise<CreateResult[]> {
    const c = batch.creates;
    // A limited run is never claimed here: the claim (slots.ts) gives it a slot or queues it.
    const owner = (x: (typeof c)[number]) => (x.concurrency ? null : x.owner);
    const inserted = await q<RunRow>("wm_create_runs", this.sql.create, [
      c.map((x) => x.workflow),
      c.map((x) => x.key),
      c.map((x) => x.version),
      c.map((x) => (owner(x) ? "running" : "pending")),
      c.map((x) => x.input),
      c.map((x) => x.initialState),
      c.map((x) => (owner(x) ? x.leaseUntil : x.now)),
      c.map((x) => owner(x)),
      c.map((x) => (owner(x) ? x.leaseUntil : null)),
      c.map((x) => x.now),
      c.map((x) => x.traceContext ?? null),
      c.map((x) => x.parentRunId ?? null),
      c.map((x) => x.concurrency?.key ?? null),
      c.map((x) => x.concurrency?.limit ?? null),
    ]);
    const fresh = new Map(inserted.rows.map((r) => [`${r.workflow}\u0000${r.key}`, r]));
    const missing = c.filter((x) => !fresh.has(`${x.workflow}\u0000${x.key}`));
    const old = new Map<string, RunRow>();
    if (missing.length) {
      const found = await q<RunRow>("wm_existing_runs", this.sql.existing, [
        missing.map((x) => x.workflow),
        missing.map((x) => x.key),
      ]);
      for (const r of found.rows) old.set(`${r.workflow}\u0000${r.key}`, r);
    }
    const seen = new Set<string>();
    return c.map((x) => {
      const k = `${x.workflow}\u0000${x.key}`;
      const row = fresh.get(k);
      const first = !seen.has(k);
      seen.add(k);
      if (row && first) return { run: row, created: true };
      return { run: row ?? old.get(k)!, created: false };
    });
  }

  /** Sets tags (one row per run and name, the last write winning: an upsert may not touch a row twice). */
  private async setTags(q: Query, rows: TagRow[]): Promise<void> {
    const byKey = new Map<string, TagRow>();
    for (const t of rows) byKey.set(`${t.runId}\u0000${t.name}`, t);
    const t = [...byKey.values()];
    await q("wm_set_tags", this.sql.setTags, [
      t.map((x) => x.runId),
      t.map((x) => pgText(x.name)),
      t.map((x) => pgText(x.value)),
    ]);
  }

  async upsertEntries(q: Query, rows: EntryRow[]): Promise<void> {
    // One row per (run, seq), the last write winning (an upsert may not touch a row twice).
    const byKey = new Map<string, EntryRow>();
    for (const e of rows) byKey.set(`${e.runId}:${e.seq}`, e);
    const e = [...byKey.values()];
    await q("wm_upsert_entries", this.sql.upsertEntries, [
      e.map((x) => x.runId),
      e.map((x) => x.seq),
      e.map((x) => x.scope),
      e.map((x) => x.ordinal),
      e.map((x) => x.name),
      e.map((x) => x.kind),
      e.map((x) => x.status),
      e.map((x) => x.startedAt),
      e.map((x) => x.endedAt),
      e.map((x) => x.input),
      e.map((x) => x.output),
      e.map((x) => x.error),
      e.map((x) => x.attempts),
      e.map((x) => x.detail),
      e.map((x) => x.stateSeq),
      e.map((x) => x.stateDiff),
    ]);
  }

  private async consume(q: Query, batch: WriteBatch, now: number): Promise<void> {
    const c = batch.consume;
    const done = await q<{ id: number }>("wm_consume", this.sql.consume, [
      now,
      c.map((x) => x.messageId),
      c.map((x) => x.runId),
      c.map((x) => x.bySeq),
    ]);
    if (done.rows.length === c.length) return;
    const updated = new Set(done.rows.map((r) => r.id));
    const seen = new Set<number>();
    for (const x of c) {
      if (!updated.has(x.messageId) || seen.has(x.messageId)) {
        throw new StorageError("MESSAGE_ALREADY_CONSUMED", `Message #${x.messageId} was already consumed.`, {
          messageId: x.messageId,
        });
      }
      seen.add(x.messageId);
    }
  }

  /** Applies run patches: one UPDATE per set of patched fields, then the wake-up check for suspensions. */
  private async patchRuns(q: Query, patches: RunPatch[], now: number): Promise<void> {
    const merged = new Map<number, RunPatch>();
    for (const p of patches) {
      const prev = merged.get(p.id);
      merged.set(p.id, prev ? Object.assign(prev, p) : { ...p });
    }
    const groups = new Map<string, RunPatch[]>();
    for (const p of merged.values()) {
      const keys = Object.keys(p)
        .filter((k) => k !== "id" && (p as never)[k] !== undefined)
        .sort();
      if (keys.length === 0) continue;
      const sig = keys.join(",");
      let list = groups.get(sig);
      if (!list) groups.set(sig, (list = []));
      list.push(p);
    }
    for (const [sig, list] of groups) {
      const keys = sig.split(",");
      const stmt = this.patchStatement(sig, keys);
      const values: unknown[] = [list.map((p) => p.id)];
      for (const k of keys) values.push(list.map((p) => (p as unknown as Record<string, unknown>)[k]));
      await q(stmt.name, stmt.text, values);
    }
    const onChildren = [...merged.values()].filter((p) => p.waitRuns);
    if (onChildren.length) {
      await q("wm_wake_if_child_ended", this.sql.wakeIfChildEnded, [
        now,
        onChildren.map((p) => p.id),
        onChildren.map((p) => p.waitRuns),
      ]);
    }
    const ending = [...merged.values()].filter((p) => p.status && TERMINAL.has(p.status)).map((p) => p.id);
    if (ending.length) await q("wm_wake_parents", this.sql.wakeParents, [now, ending]);
    const waiting = [...merged.values()].filter((p) => p.waitQueues);
    if (waiting.length) {
      await q("wm_wake_if_message_waiting", this.sql.wakeIfMessageWaiting, [
        now,
        waiting.map((p) => p.id),
        waiting.map((p) => p.waitQueues),
      ]);
    }
  }

  private patchStatement(sig: string, keys: string[]): { name: string; text: string } {
    let stmt = this.patchSql.get(sig);
    if (!stmt) {
      const sets = keys.map((k) => `${PATCH_COLUMNS[k]![0]} = p.${PATCH_COLUMNS[k]![0]}`).join(", ");
      const arrays = keys.map((k, i) => `$${i + 2}::${PATCH_COLUMNS[k]![1]}[]`).join(", ");
      const names = keys.map((k) => PATCH_COLUMNS[k]![0]).join(", ");
      stmt = {
        name: `wm_patch_${this.patchSql.size}`,
        text: `UPDATE ${this.t.runs} r SET ${sets} FROM unnest($1::bigint[], ${arrays}) AS p(id, ${names})
          WHERE r.id = p.id`,
      };
      this.patchSql.set(sig, stmt);
    }
    return stmt;
  }

  private async insertMessages(q: Query, batch: WriteBatch, now: number): Promise<MessageResult[]> {
    const m = batch.messages;
    const s = this.sql;
    const ids = (await q<{ id: number }>("wm_message_ids", s.messageIds, [m.length])).rows.map((r) => r.id);
    const keys = m.map((x) => (x.idempotencyKey === null ? null : pgText(x.idempotencyKey)));
    const inserted = await q<{ id: number }>("wm_insert_messages", s.insertMessages, [
      ids,
      m.map((x) => x.runId),
      m.map((x) => x.queue),
      m.map((x) => x.body),
      m.map((x) => x.now),
      keys,
    ]);
    const stored = new Set(inserted.rows.map((r) => r.id));
    const results: MessageResult[] = [];
    const dupes: number[] = [];
    m.forEach((_, i) => {
      if (stored.has(ids[i]!)) results.push({ id: ids[i]!, duplicate: false });
      else {
        dupes.push(i);
        results.push({ id: 0, duplicate: true });
      }
    });
    if (dupes.length) {
      const found = await q<{ id: number; runId: number; key: string }>(
        "wm_messages_by_key",
        s.messagesByKey,
        [dupes.map((i) => m[i]!.runId), dupes.map((i) => keys[i])],
      );
      const byKey = new Map(found.rows.map((r) => [`${r.runId}\u0000${r.key}`, r.id]));
      for (const i of dupes) results[i]!.id = byKey.get(`${m[i]!.runId}\u0000${keys[i]}`)!;
    }
    const woken = m.filter((_, i) => !results[i]!.duplicate);
    if (woken.length) {
      await q("wm_wake_for_messages", s.wakeForMessages, [
        now,
        woken.map((x) => x.runId),
        woken.map((x) => x.queue),
      ]);
    }
    return results;
  }
}

/** The tags of the runs this batch really created (a run that existed keeps its own). */
function tagsOfCreated(batch: WriteBatch, created: CreateResult[]): TagRow[] {
  const out: TagRow[] = [];
  batch.creates.forEach((c, i) => {
    const res = created[i];
    if (!c.tags || !res?.created) return;
    for (const [name, value] of Object.entries(c.tags)) out.push({ runId: res.run.id, name, value });
  });
  return out;
}
