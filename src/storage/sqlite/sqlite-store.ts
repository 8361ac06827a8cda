// The embedded default store: one SQLite file through better-sqlite3.
// WAL, pragmas at open, statements prepared once, synchronous transactions only.

import fs from "node:fs";
import nodePath from "node:path";
import Database from "better-sqlite3";
import { LeaseLostError, StorageError } from "../../errors.js";
import type { Durability } from "../durability.js";
import type {
  BatchResult,
  ClaimedRun,
  CreateResult,
  EntryRow,
  FailureGroupQuery,
  FailureGroupRow,
  LoadedRun,
  MessageResult,
  MessageRow,
  RejectionRow,
  RequestRow,
  RunCount,
  RunPatch,
  RunQuery,
  RunRow,
  Store,
  WorkflowMeta,
  WriteBatch,
} from "../store.js";
import { type Checkpointer, startCheckpointer } from "./checkpointer.js";
import { describeOpenError, describeStorageError } from "./errors.js";
import { migrate } from "./migrations.js";
import {
  entryFromArray,
  numbered,
  PATCH_COLUMNS,
  prepareStatements,
  RUN_COLUMNS,
  type Statements,
} from "./statements.js";

export interface SqliteOptions {
  durability?: Durability;
  /** How long a write waits for another process's lock before failing (ms). */
  busyTimeoutMs?: number;
  readonly?: boolean;
  /**
   * Run WAL checkpoints on a worker thread instead of inside commits (for a process that executes
   * runs: its commits then only append to the WAL). Default false: SQLite's automatic checkpoints.
   */
  backgroundCheckpoints?: boolean;
}

/** Store methods whose SQLite errors are translated (commit and claims translate their own). */
const GUARDED = [
  "getRun",
  "getRuns",
  "findRun",
  "loadRuns",
  "listRuns",
  "countRuns",
  "pendingMessageCounts",
  "failureGroups",
  "liveVersions",
  "listEntries",
  "getEntry",
  "allEntries",
  "listMessages",
  "messageByKey",
  "getMessage",
  "listRejections",
  "messagesSince",
  "maxMessageId",
  "renewLeases",
  "owners",
  "expireOwner",
  "nextWakeAt",
  "pendingRequests",
  "getRequest",
  "workflowMeta",
  "changeCounter",
] as const;

/** Opens (creating if needed, unless read-only) a Waymark SQLite database and applies migrations. */
export function openSqliteStore(path: string, options: SqliteOptions = {}): SqliteStore {
  if (options.readonly && path !== ":memory:" && !fs.existsSync(path)) {
    throw new StorageError(
      "STORAGE_NOT_FOUND",
      `There is no database at ${nodePath.resolve(path)}, and a read-only open creates none. Point at the file your application writes.`,
      { path },
    );
  }
  let db: Database.Database;
  try {
    db = new Database(path, {
      readonly: options.readonly ?? false,
      fileMustExist: options.readonly ?? false,
    });
  } catch (err) {
    throw describeOpenError(path, err);
  }
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    if (path !== ":memory:" && !options.readonly) setWal(db);
    db.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
    db.pragma("temp_store = MEMORY");
    db.pragma("cache_size = -8000");
    migrate(db, path, options.readonly ?? false);
  } catch (err) {
    db.close();
    throw describeOpenError(path, err);
  }
  const store = new SqliteStore(db, path);
  if (options.backgroundCheckpoints && path !== ":memory:" && !options.readonly) {
    db.pragma("wal_autocheckpoint = 0");
    store.checkpointer = startCheckpointer(path);
  }
  return store;
}

/** Switches to WAL; two processes creating one file at once can briefly lock each other out, so retry. */
function setWal(db: Database.Database): void {
  for (let attempt = 0; ; attempt++) {
    try {
      db.pragma("journal_mode = WAL");
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== "SQLITE_BUSY" || attempt >= 50) throw err;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
    }
  }
}

/** SQLite implementation of the Store. Every method is synchronous underneath. */
export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  readonly location: string;
  readonly db: Database.Database;
  private readonly stmts: Statements;
  private readonly patchStatements = new Map<string, Database.Statement>();
  private readonly commitTx: Database.Transaction<(batch: WriteBatch) => BatchResult>;

  constructor(db: Database.Database, path: string) {
    this.db = db;
    this.location = path;
    this.stmts = prepareStatements(db);
    this.commitTx = db.transaction((batch: WriteBatch) => this.apply(batch));
    // Every read and write reports SQLite's failures as StorageErrors that say what to do.
    const self = this as unknown as Record<string, (...args: unknown[]) => Promise<unknown>>;
    for (const name of GUARDED) {
      const method = self[name]!.bind(this);
      self[name] = async (...args: unknown[]) => {
        try {
          return await method(...args);
        } catch (err) {
          throw this.describeWriteError(err);
        }
      };
    }
  }

  async commit(batch: WriteBatch): Promise<BatchResult> {
    try {
      return this.commitTx.immediate(batch);
    } catch (err) {
      throw this.describeWriteError(err);
    }
  }

  private apply(batch: WriteBatch): BatchResult {
    const s = this.stmts;
    const now = batch.now;
    for (const lease of batch.leases) {
      const owner = s.ownerOf.get(lease.runId) as string | null | undefined;
      if (owner !== lease.owner) throw new LeaseLostError(lease.runId, owner ?? null);
    }
    const created: CreateResult[] = [];
    for (const c of batch.creates) {
      const row = s.insertRun.get({
        workflow: c.workflow,
        key: c.key,
        version: c.version,
        status: c.owner ? "running" : "pending",
        input: c.input,
        initialState: c.initialState,
        wakeAt: c.owner ? c.leaseUntil : c.now,
        owner: c.owner,
        leaseUntil: c.leaseUntil,
        now: c.now,
        traceContext: c.traceContext ?? null,
      }) as RunRow | undefined;
      if (row) created.push({ run: row, created: true });
      else created.push({ run: s.runByKey.get(c.workflow, c.key) as RunRow, created: false });
    }
    for (const d of batch.deleteEntries) for (const seq of d.seqs) s.deleteEntry.run(d.runId, seq);
    for (const e of batch.entries) {
      s.upsertEntry.run(
        e.runId,
        e.seq,
        e.scope,
        e.ordinal,
        e.name,
        e.kind,
        e.status,
        e.startedAt,
        e.endedAt,
        e.input,
        e.output,
        e.error,
        e.attempts,
        e.detail,
        e.stateSeq,
        e.stateDiff,
      );
    }
    for (const id of batch.unconsume) s.unconsume.run(id);
    for (const c of batch.consume) {
      if (s.consume.run(now, c.bySeq, c.messageId, c.runId).changes !== 1) {
        throw new StorageError("MESSAGE_ALREADY_CONSUMED", `Message #${c.messageId} was already consumed.`, {
          messageId: c.messageId,
        });
      }
    }
    for (const patch of batch.runs) this.applyPatch(patch, now);
    const messages: MessageResult[] = [];
    for (const m of batch.messages) {
      const info = s.insertMessage.run(m.runId, m.queue, m.body, m.now, m.idempotencyKey);
      if (info.changes === 1) {
        messages.push({ id: Number(info.lastInsertRowid), duplicate: false });
        s.wakeForMessage.run(numbered(now, m.runId, m.queue));
      } else {
        messages.push({
          id: s.messageByIdempotency.get(m.runId, m.idempotencyKey) as number,
          duplicate: true,
        });
      }
    }
    const requests: number[] = [];
    for (const r of batch.requests) {
      requests.push(Number(s.insertRequest.run(r.runId, r.kind, r.args, now).lastInsertRowid));
      s.wakeForRequest.run(numbered(now, r.runId));
    }
    for (const d of batch.requestsDone) s.requestDone.run(now, d.result, d.id);
    for (const r of batch.rejections) s.insertRejection.run(r);
    return { created, messages, requests };
  }

  private applyPatch(patch: RunPatch, now: number): void {
    const keys = Object.keys(patch).filter((k) => k !== "id" && (patch as never)[k] !== undefined);
    if (keys.length === 0) return;
    const signature = keys.join(",");
    let stmt = this.patchStatements.get(signature);
    if (!stmt) {
      const sets = keys.map((k) => `${PATCH_COLUMNS[k]} = @${k}`).join(", ");
      stmt = this.db.prepare(`UPDATE runs SET ${sets} WHERE id = @id`);
      this.patchStatements.set(signature, stmt);
    }
    const params: Record<string, unknown> = { id: patch.id };
    for (const k of keys) params[k] = (patch as unknown as Record<string, unknown>)[k];
    stmt.run(params);
    if (patch.waitQueues) this.stmts.wakeIfMessageWaiting.run(numbered(now, patch.id, patch.waitQueues));
  }

  private describeWriteError(err: unknown): unknown {
    return describeStorageError(this.location, err);
  }

  async getRun(id: number): Promise<RunRow | undefined> {
    return this.stmts.runById.get(id) as RunRow | undefined;
  }

  async getRuns(ids: number[]): Promise<RunRow[]> {
    const out: RunRow[] = [];
    for (const id of ids) {
      const row = this.stmts.runById.get(id) as RunRow | undefined;
      if (row) out.push(row);
    }
    return out;
  }

  async findRun(workflow: string, key: string): Promise<RunRow | undefined> {
    return this.stmts.runByKey.get(workflow, key) as RunRow | undefined;
  }

  async loadRuns(ids: number[]): Promise<LoadedRun[]> {
    const out: LoadedRun[] = [];
    this.db.transaction(() => {
      for (const id of ids) {
        const run = this.stmts.runById.get(id) as RunRow | undefined;
        if (!run) continue;
        out.push({
          run,
          entries: (this.stmts.entriesOf.all(id) as unknown[][]).map(entryFromArray),
          messages: this.stmts.pendingMessages.all(id) as MessageRow[],
        });
      }
    })();
    return out;
  }

  async listRuns(q: RunQuery): Promise<RunRow[]> {
    const where: string[] = [];
    const args: unknown[] = [];
    if (q.workflow !== undefined) {
      where.push("workflow = ?");
      args.push(q.workflow);
    }
    if (q.status && q.status.length > 0) {
      where.push(`status IN (${q.status.map(() => "?").join(", ")})`);
      args.push(...q.status);
    }
    if (q.key !== undefined) {
      where.push("key = ?");
      args.push(q.key);
    }
    if (q.keyContains) {
      where.push("instr(key, ?) > 0");
      args.push(q.keyContains);
    }
    if (q.errorContains) {
      where.push("instr(lower(error), lower(?)) > 0");
      args.push(q.errorContains);
    }
    if (q.createdAfter !== undefined) {
      where.push("created_at >= ?");
      args.push(q.createdAfter);
    }
    if (q.createdBefore !== undefined) {
      where.push("created_at < ?");
      args.push(q.createdBefore);
    }
    if (q.version !== undefined) {
      where.push("version = ?");
      args.push(q.version);
    }
    if (q.failureSignature !== undefined) {
      where.push("failure_signature = ? AND status IN ('failed', 'retrying')");
      args.push(q.failureSignature);
    }
    if (q.before) {
      where.push("(created_at < ? OR (created_at = ? AND id < ?))");
      args.push(q.before.createdAt, q.before.createdAt, q.before.id);
    }
    const sql = `SELECT ${RUN_COLUMNS} FROM runs ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, id DESC LIMIT ?`;
    args.push(q.limit);
    return this.db.prepare(sql).all(...args) as RunRow[];
  }

  async countRuns(): Promise<RunCount[]> {
    return this.stmts.countRuns.all() as RunCount[];
  }

  async pendingMessageCounts(): Promise<Array<{ workflow: string; queue: string; count: number }>> {
    return this.stmts.pendingMessageCounts.all() as Array<{ workflow: string; queue: string; count: number }>;
  }

  async failureGroups(q: FailureGroupQuery): Promise<{ total: number; groups: FailureGroupRow[] }> {
    const where = [
      "failure_signature IS NOT NULL",
      "status IN ('failed', 'retrying')",
      "coalesce(finished_at, updated_at) >= ?",
    ];
    const args: unknown[] = [q.since];
    if (q.workflow !== undefined) {
      where.push("workflow = ?");
      args.push(q.workflow);
    }
    if (q.signature !== undefined) {
      where.push("failure_signature = ?");
      args.push(q.signature);
    }
    const from = `FROM runs WHERE ${where.join(" AND ")}`;
    const total = this.db
      .prepare(`SELECT count(*) ${from}`)
      .pluck()
      .get(...args) as number;
    const groups = this.db
      .prepare(
        `SELECT failure_signature AS signature, workflow, count(*) AS count, sum(status = 'retrying') AS retrying,
          min(coalesce(finished_at, updated_at)) AS firstAt, max(coalesce(finished_at, updated_at)) AS lastAt
        ${from} GROUP BY failure_signature, workflow ORDER BY count DESC, lastAt DESC LIMIT ?`,
      )
      .all(...args, q.limit) as FailureGroupRow[];
    return { total, groups };
  }

  async liveVersions(): Promise<Array<{ workflow: string; version: number; count: number; keys: string[] }>> {
    const rows = this.stmts.liveVersions.all() as Array<{
      workflow: string;
      version: number;
      count: number;
      keys: string;
    }>;
    return rows.map((r) => ({ ...r, keys: r.keys.split("\u001f").slice(0, 20) }));
  }

  async listEntries(runId: number, afterSeq: number, limit: number): Promise<EntryRow[]> {
    return this.stmts.entriesPage.all(runId, afterSeq, limit) as EntryRow[];
  }

  async getEntry(runId: number, seq: number): Promise<EntryRow | undefined> {
    return this.stmts.entry.get(runId, seq) as EntryRow | undefined;
  }

  async allEntries(runId: number): Promise<EntryRow[]> {
    return (this.stmts.entriesOf.all(runId) as unknown[][]).map(entryFromArray);
  }

  async listMessages(
    runId: number,
    opts: { includeConsumed: boolean; limit: number },
  ): Promise<MessageRow[]> {
    return (opts.includeConsumed ? this.stmts.allMessages : this.stmts.pendingMessagesLimited).all(
      runId,
      opts.limit,
    ) as MessageRow[];
  }

  async getMessage(id: number): Promise<MessageRow | undefined> {
    return this.stmts.getMessage.get(id) as MessageRow | undefined;
  }

  async messageByKey(runId: number, idempotencyKey: string): Promise<MessageRow | undefined> {
    return this.stmts.messageByKey.get(runId, idempotencyKey) as MessageRow | undefined;
  }

  async listRejections(runId: number, limit: number): Promise<RejectionRow[]> {
    return this.stmts.rejections.all(runId, limit) as RejectionRow[];
  }

  async messagesSince(afterId: number, limit: number): Promise<MessageRow[]> {
    return this.stmts.messagesSince.all(afterId, limit) as MessageRow[];
  }

  async maxMessageId(): Promise<number> {
    return this.stmts.maxMessageId.get() as number;
  }

  async claimDue(
    now: number,
    owner: string,
    leaseUntil: number,
    limit: number,
    workflows: string[] | null,
  ): Promise<ClaimedRun[]> {
    const claimed: ClaimedRun[] = [];
    try {
      this.db
        .transaction(() => {
          const due = this.stmts.due.all(
            numbered(now, limit, workflows ? JSON.stringify(workflows) : null, owner),
          ) as Array<{ id: number; owner: string | null }>;
          for (const d of due) {
            const row = this.stmts.claim.get({ owner, until: leaseUntil, now, id: d.id }) as RunRow;
            claimed.push({ ...row, takenFrom: d.owner });
          }
        })
        .immediate();
    } catch (err) {
      throw this.describeWriteError(err);
    }
    return claimed;
  }

  async renewLeases(owner: string, leaseUntil: number, runIds: number[]): Promise<number[]> {
    return this.stmts.renew.all(numbered(leaseUntil, owner, JSON.stringify(runIds))) as number[];
  }

  async owners(): Promise<Array<{ owner: string; leaseUntil: number }>> {
    return this.stmts.owners.all() as Array<{ owner: string; leaseUntil: number }>;
  }

  async expireOwner(owner: string, now: number): Promise<number> {
    return this.stmts.expireOwner.run(numbered(now, owner)).changes;
  }

  async nextWakeAt(workflows: string[] | null): Promise<number | null> {
    const at = workflows ? this.stmts.nextWakeFor.get(JSON.stringify(workflows)) : this.stmts.nextWake.get();
    return (at as number | null) ?? null;
  }

  async cancelRun(runId: number, now: number, owner: string, reason: string): Promise<boolean> {
    try {
      return this.db
        .transaction(() => {
          if (this.stmts.cancelRun.run(numbered(now, runId, owner, reason)).changes !== 1) return false;
          this.stmts.cancelEntries.run(numbered(now, runId));
          return true;
        })
        .immediate();
    } catch (err) {
      throw this.describeWriteError(err);
    }
  }

  async claimRun(runId: number, owner: string, leaseUntil: number, now: number): Promise<boolean> {
    try {
      return this.stmts.claimRun.run(numbered(runId, owner, leaseUntil, now)).changes === 1;
    } catch (err) {
      throw this.describeWriteError(err);
    }
  }

  async getRequest(
    id: number,
  ): Promise<(RequestRow & { doneAt: number | null; result: string | null }) | undefined> {
    return this.stmts.getRequest.get(id) as
      | (RequestRow & { doneAt: number | null; result: string | null })
      | undefined;
  }

  async pendingRequests(runIds: number[] | null, limit: number): Promise<RequestRow[]> {
    if (runIds === null) return this.stmts.requestsAll.all(limit) as RequestRow[];
    const out: RequestRow[] = [];
    for (const id of runIds) out.push(...(this.stmts.requestsFor.all(id) as RequestRow[]));
    return out;
  }

  async registerWorkflows(meta: WorkflowMeta[]): Promise<void> {
    try {
      this.db.transaction(() => {
        for (const m of meta) this.stmts.registerWorkflow.run(m);
      })();
    } catch (err) {
      throw this.describeWriteError(err);
    }
  }

  async workflowMeta(): Promise<WorkflowMeta[]> {
    return this.stmts.workflowMeta.all() as WorkflowMeta[];
  }

  async changeCounter(): Promise<number> {
    return this.db.pragma("data_version", { simple: true }) as number;
  }

  /** Set when checkpoints run on a worker thread. */
  checkpointer: Checkpointer | null = null;

  async close(): Promise<void> {
    await this.checkpointer?.stop();
    this.checkpointer = null;
    if (this.db.open) this.db.close();
  }

  /** Size of the database file in bytes (0 in memory). */
  fileSize(): number {
    if (this.location === ":memory:") return 0;
    try {
      return fs.statSync(this.location).size;
    } catch {
      return 0;
    }
  }
}
