// The store for more than one machine: PostgreSQL through node-postgres, a pool per process, a
// dedicated LISTEN connection for other processes' changes.
//
// IMPORTANT: `commit` is one transaction (see batch.ts for its locking); runs are claimed with
// FOR UPDATE SKIP LOCKED, so several engines share one database and never claim one run twice;
// every writing transaction sends NOTIFY tagged with this instance's id (others count it, we ignore it).

import { randomUUID } from "node:crypto";
import pg from "pg";
import { log } from "../../log.js";
import { AUDIT_INSERT_COLUMNS, auditCount, auditSelect } from "../audit-sql.js";
import type {
  AuditAppend,
  AuditFilter,
  AuditQuery,
  AuditRow,
  BatchResult,
  ClaimedRun,
  ConcurrencyQueue,
  EntryRow,
  FailureGroupQuery,
  FailureGroupRow,
  LoadedRun,
  MessageRow,
  PlanOutcome,
  PlanRow,
  PlanRunRow,
  PrunedCount,
  RejectionRow,
  RequestRow,
  RetentionRule,
  RunCount,
  RunQuery,
  RunRow,
  ScheduleAdvance,
  ScheduleDecl,
  ScheduleRow,
  Store,
  TagRow,
  WorkflowMeta,
  WriteBatch,
} from "../store.js";
import { loadedEntry } from "../store.js";
import { BatchWriter } from "./batch.js";
import { clientConfig, migrate, type PostgresTarget, parsePostgresUrl } from "./connect.js";
import { connectionLost, describeOpenError, describeRuntimeError } from "./errors.js";
import { ChangeListener } from "./listener.js";
import * as plans from "./plans.js";
import { countExpired, nextToExpire, pruneRuns, pruneStatements } from "./prune.js";
import { statements } from "./queries.js";
import { failureCountsQuery, failureGroupsQuery, readRuns } from "./run-queries.js";
import {
  advanceSchedule,
  listSchedules,
  pauseSchedule,
  scheduleStatements,
  syncSchedules,
} from "./schedules.js";
import { PostgresSlots, type SlotKey } from "./slots.js";
import { type Tables, tables } from "./sql.js";
import { inTransaction, type Query } from "./transaction.js";

/** A row of replayEntriesOfRuns: the replay columns, then the rest as a JSON array (null for a completed step). */
type ReplayRow = Pick<
  EntryRow,
  | "runId"
  | "seq"
  | "scope"
  | "ordinal"
  | "name"
  | "kind"
  | "status"
  | "output"
  | "detail"
  | "stateSeq"
  | "stateDiff"
> & { rest: string | null };

export interface PostgresOptions {
  /** Open the LISTEN connection (default true). One-shot tools that never wait for changes skip it. */
  listen?: boolean;
}

/** Opens (creating the schema and tables if needed) a Waymark database on PostgreSQL. */
export async function openPostgresStore(url: string, options: PostgresOptions = {}): Promise<PostgresStore> {
  const target = parsePostgresUrl(url);
  const pool = new pg.Pool({ ...clientConfig(target), max: target.poolSize });
  pool.on("error", (err) => {
    log("warn", "waymark", `an idle PostgreSQL connection failed (${err.message}); it is replaced.`);
  });
  const instanceId = randomUUID();
  let listener: ChangeListener | null = null;
  let errorIndex = false;
  try {
    ({ errorIndex } = await migrate(pool, target));
    if (options.listen !== false) {
      listener = new ChangeListener(clientConfig(target), target.channel, instanceId);
      await listener.start();
    }
  } catch (err) {
    await pool.end().catch(() => {});
    throw describeOpenError(target, err);
  }
  return new PostgresStore(pool, target, listener, instanceId, errorIndex);
}

/** PostgreSQL implementation of the Store. */
export class PostgresStore implements Store {
  readonly kind = "postgres" as const;
  readonly location: string;
  readonly schema: string;
  /** The LISTEN/NOTIFY channel of this schema (quoted). */
  readonly channel: string;
  private readonly t: Tables;
  private readonly writer: BatchWriter;
  private readonly sql;
  private readonly notifySql: string;
  private readonly scheduleSql: ReturnType<typeof scheduleStatements>;
  private readonly slots: PostgresSlots;
  private readonly pruneSql: ReturnType<typeof pruneStatements>;
  private readonly planSql: ReturnType<typeof plans.planStatements>;
  private closed = false;

  constructor(
    readonly pool: pg.Pool,
    private readonly target: PostgresTarget,
    private readonly listener: ChangeListener | null,
    readonly instanceId: string,
    /** Whether the trigram index of error text is there (migration 15; pg_trgm may not be had). */
    private readonly errorIndex = false,
  ) {
    this.location = target.location;
    this.schema = target.schema;
    this.channel = target.channel;
    const t = (this.t = tables(target.quoted));
    this.writer = new BatchWriter(t);
    this.notifySql = `NOTIFY ${target.channel}, '${instanceId}'`;
    this.sql = statements(t);
    this.slots = new PostgresSlots(t);
    this.scheduleSql = scheduleStatements(t);
    this.pruneSql = pruneStatements(t);
    this.planSql = plans.planStatements(t);
  }

  // ---- plumbing ---------------------------------------------------------------------------------

  /**
   * One statement on any pooled connection (prepared once per connection by name). A statement that
   * met a dead connection is tried again on a fresh one when running it twice is harmless (`retry`):
   * reads and idempotent writes.
   */
  private async q<R extends pg.QueryResultRow = any>(
    name: string,
    text: string,
    values: unknown[] = [],
    retry = true,
  ): Promise<pg.QueryResult<R>> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.pool.query<R>({ name, text, values });
      } catch (err) {
        if (retry && connectionLost(err) && attempt < 3 && !this.closed) continue;
        throw this.describe(err);
      }
    }
  }

  /** Runs `fn` in a transaction on one connection (see transaction.ts). */
  private transaction<T>(
    fn: (q: Query) => Promise<T>,
    notify: (result: T) => boolean,
    begin = "BEGIN",
  ): Promise<T> {
    return inTransaction(
      {
        pool: this.pool,
        notifySql: this.notifySql,
        closed: () => this.closed,
        describe: (err) => this.describe(err),
      },
      fn,
      notify,
      begin,
    );
  }

  private describe(err: unknown): unknown {
    return describeRuntimeError(err, this.target, this.closed);
  }

  // ---- writes -----------------------------------------------------------------------------------

  async commit(batch: WriteBatch): Promise<BatchResult> {
    // A sequential run's step records: one autocommit statement instead of BEGIN, lock, write, COMMIT.
    if (BatchWriter.entriesOnly(batch)) {
      // (An upsert of the same rows is idempotent, so a lost connection may retry it.)
      await this.writer.upsertEntries((name, text, values) => this.q(name, text, values), batch.entries);
      return { created: [], messages: [], requests: [] };
    }
    return this.transaction(
      (q) => this.writer.apply(q, batch),
      () => true,
    );
  }

  async claimDue(
    now: number,
    owner: string,
    leaseUntil: number,
    limit: number,
    workflows: string[] | null,
  ): Promise<ClaimedRun[]> {
    // Not retried: if the connection died after the claim committed, a second claim would take more runs.
    const values = [now, owner, limit, workflows, leaseUntil];
    const claimed = (await this.q<ClaimedRun>("wm_claim_due", this.sql.claimDue, values, false)).rows;
    // Runs that need a concurrency slot are claimed apart, under their keys' locks (slots.ts).
    const room = limit - claimed.length;
    if (room <= 0) return claimed;
    if (!(await this.slots.anyDue((n, t, v) => this.q(n, t, v), now, owner, workflows))) return claimed;
    const limited = await this.transaction(
      (q) => this.slots.claim(q, now, owner, leaseUntil, room, workflows),
      (r) => r.changed,
    );
    return [...claimed, ...limited.claimed];
  }

  async concurrencyQueue(runId: number): Promise<ConcurrencyQueue | null> {
    return this.slots.queue((n, t, v) => this.q(n, t, v), runId);
  }

  async renewLeases(owner: string, leaseUntil: number, runIds: number[]): Promise<number[]> {
    return (await this.q<{ id: number }>("wm_renew", this.sql.renew, [leaseUntil, owner, runIds])).rows.map(
      (r) => r.id,
    );
  }

  async expireOwner(owner: string, now: number): Promise<number> {
    return this.transaction(
      async (q) => (await q("wm_expire_owner", this.sql.expireOwner, [now, owner])).rowCount ?? 0,
      (n) => n > 0,
    );
  }

  async cancelRun(runId: number, now: number, owner: string, reason: string): Promise<boolean> {
    return this.transaction(
      async (q) => {
        await q("wm_lock_parent", this.sql.lockParent, [runId]);
        if ((await q("wm_cancel_run", this.sql.cancelRun, [now, runId, owner, reason])).rowCount !== 1)
          return false;
        await q("wm_cancel_entries", this.sql.cancelEntries, [now, runId]);
        await q("wm_wake_parent", this.sql.wakeParent, [now, [runId]]);
        const slot = (await q("wm_slot_of_run", this.sql.slotOfRun, [runId])).rows[0] as SlotKey | undefined;
        if (slot?.key != null && slot.limit != null) await this.slots.released(q, [slot], now);
        return true;
      },
      (done) => done,
    );
  }

  async claimRun(runId: number, owner: string, leaseUntil: number, now: number): Promise<boolean> {
    const res = await this.q("wm_claim_run", this.sql.claimRun, [runId, owner, leaseUntil, now]);
    return res.rowCount === 1;
  }

  async registerWorkflows(meta: WorkflowMeta[]): Promise<void> {
    if (meta.length === 0) return;
    // One row per (name, version), the last winning, in key order (concurrent upserts cannot deadlock).
    const rows = [...new Map(meta.map((m) => [`${m.name}\u0000${m.version}`, m])).values()].sort((a, b) =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : a.version - b.version,
    );
    await this.q("wm_register_workflows", this.sql.registerWorkflows, [
      rows.map((m) => m.name),
      rows.map((m) => m.version),
      rows.map((m) => m.description),
      rows.map((m) => m.queues),
      rows.map((m) => m.actions),
      rows.map((m) => m.registeredAt),
    ]);
  }

  // ---- reads ------------------------------------------------------------------------------------

  async getRun(id: number): Promise<RunRow | undefined> {
    return (await this.q<RunRow>("wm_run_by_id", this.sql.runById, [id])).rows[0];
  }

  async getRuns(ids: number[]): Promise<RunRow[]> {
    if (ids.length === 0) return [];
    return (await this.q<RunRow>("wm_runs_by_ids", this.sql.runsByIds, [ids])).rows;
  }

  async childRuns(parentRunId: number): Promise<RunRow[]> {
    return (await this.q<RunRow>("wm_child_runs", this.sql.childRuns, [parentRunId])).rows;
  }

  async findRun(workflow: string, key: string): Promise<RunRow | undefined> {
    return (await this.q<RunRow>("wm_run_by_key", this.sql.runByKey, [workflow, key])).rows[0];
  }

  async latestCompletedRun(workflow: string, version: number, exceptRunId: number) {
    const args = [workflow, version, exceptRunId];
    return (await this.q<RunRow>("wm_latest_completed", this.sql.latestCompleted, args)).rows[0];
  }

  async loadRuns(ids: number[]): Promise<LoadedRun[]> {
    if (ids.length === 0) return [];
    // One snapshot for a run, its entries and its messages.
    const [runs, entries, messages] = await this.transaction(
      async (q) =>
        [
          await q<RunRow>("wm_runs_by_ids", this.sql.runsByIds, [ids]),
          await q<ReplayRow>("wm_replay_entries_of_runs", this.sql.replayEntriesOfRuns, [ids]),
          await q<MessageRow>("wm_pending_of_runs", this.sql.pendingOfRuns, [ids]),
        ] as const,
      () => false,
      "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY",
    );
    const byId = new Map<number, LoadedRun>();
    for (const run of runs.rows) byId.set(run.id, { run, entries: [], messages: [] });
    for (const e of entries.rows) {
      const entry = loadedEntry(
        e.runId,
        e.seq,
        e.scope,
        e.ordinal,
        e.name,
        e.kind,
        e.status,
        e.output,
        e.detail,
        e.stateSeq,
        e.stateDiff,
        e.rest,
      );
      byId.get(e.runId)?.entries.push(entry);
    }
    for (const m of messages.rows) byId.get(m.runId)?.messages.push(m);
    const out: LoadedRun[] = [];
    for (const id of ids) {
      const loaded = byId.get(id);
      if (loaded) out.push(loaded);
    }
    return out;
  }

  async listRuns(q: RunQuery): Promise<RunRow[]> {
    try {
      return await readRuns(this.pool, this.t, q, this.errorIndex);
    } catch (err) {
      throw this.describe(err);
    }
  }

  async countRuns(): Promise<RunCount[]> {
    return (await this.q<RunCount>("wm_count_runs", this.sql.countRuns)).rows;
  }

  async runTags(runIds: number[]): Promise<TagRow[]> {
    if (runIds.length === 0) return [];
    return (await this.q<TagRow>("wm_run_tags", this.sql.runTags, [runIds])).rows;
  }

  async pendingMessageCounts(): Promise<Array<{ workflow: string; queue: string; count: number }>> {
    return (await this.q("wm_pending_message_counts", this.sql.pendingMessageCounts)).rows as Array<{
      workflow: string;
      queue: string;
      count: number;
    }>;
  }

  async failureGroups(q: FailureGroupQuery): Promise<{ total: number; groups: FailureGroupRow[] }> {
    const counted = failureCountsQuery(this.t, q);
    const { count, groups, args } = failureGroupsQuery(this.t, q);
    try {
      if (counted) {
        const rows = (await this.pool.query<FailureGroupRow & { total: number }>(counted.sql, counted.args))
          .rows;
        return { total: rows[0]?.total ?? 0, groups: rows.map(({ total: _, ...g }) => g) };
      }
      const total = (await this.pool.query<{ n: number }>(count, args)).rows[0]!.n;
      return { total, groups: (await this.pool.query<FailureGroupRow>(groups, [...args, q.limit])).rows };
    } catch (err) {
      throw this.describe(err);
    }
  }

  async liveVersions(): Promise<Array<{ workflow: string; version: number; count: number; keys: string[] }>> {
    return (await this.q("wm_live_versions", this.sql.liveVersions)).rows;
  }

  async listEntries(runId: number, afterSeq: number, limit: number): Promise<EntryRow[]> {
    return (await this.q<EntryRow>("wm_entries_page", this.sql.entriesPage, [runId, afterSeq, limit])).rows;
  }

  async getEntry(runId: number, seq: number): Promise<EntryRow | undefined> {
    return (await this.q<EntryRow>("wm_entry", this.sql.entry, [runId, seq])).rows[0];
  }

  async allEntries(runId: number): Promise<EntryRow[]> {
    return (await this.q<EntryRow>("wm_entries_of", this.sql.entriesOf, [runId])).rows;
  }

  async listMessages(
    runId: number,
    opts: { includeConsumed: boolean; limit: number },
  ): Promise<MessageRow[]> {
    const [name, text] = opts.includeConsumed
      ? ["wm_all_messages", this.sql.allMessages]
      : ["wm_pending_messages", this.sql.pendingMessages];
    return (await this.q<MessageRow>(name, text, [runId, opts.limit])).rows;
  }

  async getMessage(id: number): Promise<MessageRow | undefined> {
    return (await this.q<MessageRow>("wm_get_message", this.sql.getMessage, [id])).rows[0];
  }

  async messageByKey(runId: number, idempotencyKey: string): Promise<MessageRow | undefined> {
    return (await this.q<MessageRow>("wm_message_by_key", this.sql.messageByKey, [runId, idempotencyKey]))
      .rows[0];
  }

  async listRejections(runId: number, limit: number): Promise<RejectionRow[]> {
    return (await this.q<RejectionRow>("wm_rejections_of", this.sql.rejections, [runId, limit])).rows;
  }

  async messagesSince(afterId: number, limit: number): Promise<MessageRow[]> {
    return (await this.q<MessageRow>("wm_messages_since", this.sql.messagesSince, [afterId, limit])).rows;
  }

  async maxMessageId(): Promise<number> {
    return (await this.q<{ id: number }>("wm_max_message_id", this.sql.maxMessageId)).rows[0]!.id;
  }

  async owners(): Promise<Array<{ owner: string; leaseUntil: number }>> {
    return (await this.q<{ owner: string; leaseUntil: number }>("wm_owners", this.sql.owners)).rows;
  }

  async nextWakeAt(workflows: string[] | null): Promise<number | null> {
    return (await this.q<{ at: number | null }>("wm_next_wake", this.sql.nextWake, [workflows])).rows[0]!.at;
  }

  async getRequest(
    id: number,
  ): Promise<(RequestRow & { doneAt: number | null; result: string | null }) | undefined> {
    return (await this.q("wm_get_request", this.sql.getRequest, [id])).rows[0];
  }

  async pendingRequests(runIds: number[] | null, limit: number): Promise<RequestRow[]> {
    if (runIds === null)
      return (await this.q<RequestRow>("wm_requests_all", this.sql.requestsAll, [limit])).rows;
    if (runIds.length === 0) return [];
    return (await this.q<RequestRow>("wm_requests_for", this.sql.requestsFor, [runIds])).rows;
  }

  async workflowMeta(): Promise<WorkflowMeta[]> {
    return (await this.q<WorkflowMeta>("wm_workflow_meta", this.sql.workflowMeta)).rows;
  }

  // ---- schedules (see schedules.ts) ------------------------------------------------------------

  async schedules(): Promise<ScheduleRow[]> {
    return listSchedules((n, text, v) => this.q(n, text, v), this.scheduleSql);
  }

  async syncSchedules(decls: ScheduleDecl[], now: number): Promise<void> {
    await this.transaction(
      (q) => syncSchedules(q, this.scheduleSql, decls, now),
      () => true,
    );
  }

  async advanceSchedule(advance: ScheduleAdvance, batch: WriteBatch | null): Promise<BatchResult | null> {
    const apply = (q: Query, b: WriteBatch) => this.writer.apply(q, b);
    return this.transaction(
      (q) => advanceSchedule(q, this.scheduleSql, advance, batch, apply),
      (r) => r !== null,
    );
  }

  async setSchedulePaused(name: string, paused: boolean, now: number): Promise<boolean> {
    return this.transaction(
      (q) => pauseSchedule(q, this.scheduleSql, name, paused, now),
      (changed) => changed,
    );
  }

  // ---- audit (append-only: nothing here changes a row) --------------------------------------------

  async appendAudit(r: AuditAppend): Promise<number> {
    const text = `INSERT INTO ${this.t.audit} (${AUDIT_INSERT_COLUMNS})
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) RETURNING id`;
    const values = [r.at, r.surface, r.client, r.action, r.workflow, r.runKey, r.runId, r.args, r.argsCut];
    values.push(r.ok, r.errorCode, r.errorMessage);
    // Not retried: a lost connection may have committed the row, and a second one would record the write twice.
    return (await this.q<{ id: number }>("wm_audit_append", text, values, false)).rows[0]!.id;
  }

  async listAudit(query: AuditQuery): Promise<AuditRow[]> {
    const { text, values } = auditSelect(this.t.audit, query, (n) => `$${n}`);
    return this.unnamed<AuditRow>(text, values);
  }

  async countAudit(filter: AuditFilter): Promise<number> {
    const { text, values } = auditCount(this.t.audit, filter, (n) => `$${n}`);
    return (await this.unnamed<{ n: number }>(text, values))[0]!.n;
  }

  /** A query whose text varies with its filters (not prepared by name). */
  private async unnamed<R extends pg.QueryResultRow>(text: string, values: unknown[]): Promise<R[]> {
    try {
      return (await this.pool.query<R>(text, values)).rows;
    } catch (err) {
      throw this.describe(err);
    }
  }

  // ---- retention (see prune.ts) ---------------------------------------------------------------

  async countExpired(rules: RetentionRule[]): Promise<PrunedCount[]> {
    return countExpired((n, text, v) => this.q(n, text, v), this.pruneSql, rules);
  }

  async pruneRuns(rules: RetentionRule[], limit: number): Promise<PrunedCount[]> {
    return this.transaction(
      (q) => pruneRuns(q, this.pruneSql, rules, limit),
      (deleted) => deleted.length > 0,
    );
  }

  async nextToExpire(rules: RetentionRule[]): Promise<Array<number | null>> {
    return nextToExpire((n, text, v) => this.q(n, text, v), this.pruneSql, rules);
  }

  // ---- bulk plans (see plans.ts) ---------------------------------------------------------------

  async createPlan(plan: PlanRow, runIds: number[]): Promise<void> {
    await this.transaction(
      (q) => plans.createPlan(q, this.planSql, plan, runIds),
      () => false,
    );
  }

  async getPlan(token: string): Promise<PlanRow | undefined> {
    return plans.getPlan((n, text, v) => this.q(n, text, v), this.planSql, token);
  }

  async planRuns(
    token: string,
    o: { after: number; limit: number; pendingOnly: boolean },
  ): Promise<PlanRunRow[]> {
    return plans.planRuns((n, text, v) => this.q(n, text, v), this.planSql, token, o);
  }

  async recordPlanOutcomes(token: string, outcomes: PlanOutcome[], now: number): Promise<number[]> {
    // Not retried on a lost connection: the outcomes written once would read as not recorded.
    return plans.recordPlanOutcomes(
      (n, text, v) => this.q(n, text, v, false),
      this.planSql,
      token,
      outcomes,
      now,
    );
  }

  async planProgress(token: string): Promise<Array<{ outcome: string | null; count: number }>> {
    return plans.planProgress((n, text, v) => this.q(n, text, v), this.planSql, token);
  }

  // ---- changes ----------------------------------------------------------------------------------

  async changeCounter(): Promise<number> {
    return this.listener?.value() ?? 0;
  }

  onChange(listener: () => void): () => void {
    return this.listener?.on(listener) ?? (() => {});
  }

  /** Test hook: drops the LISTEN connection as a network failure would (it reconnects by itself). */
  dropListenConnection(): void {
    this.listener?.dropConnection();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.listener?.close();
    await this.pool.end().catch(() => {});
  }
}
