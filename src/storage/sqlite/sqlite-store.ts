// The embedded default store: one SQLite file through better-sqlite3.
// WAL, pragmas at open, statements prepared on first use and kept, synchronous transactions only.

import fs from "node:fs";
import nodePath from "node:path";
import Database from "better-sqlite3";
import { StorageError } from "../../errors.js";
import type { Durability } from "../durability.js";
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
import { sqliteAddon } from "./addon.js";
import { BatchWriter } from "./apply-batch.js";
import { SqliteAudit } from "./audit.js";
import { type Checkpointer, startCheckpointer } from "./checkpointer.js";
import { describeOpenError, describeStorageError } from "./errors.js";
import { registerFoldCase } from "./fold-case.js";
import { migrate } from "./migrations.js";
import { SqlitePlans } from "./plans.js";
import { SqlitePruner } from "./prune.js";
import { failureCountsQuery, failureGroupsQuery, readRuns } from "./run-queries.js";
import { SqliteSchedules } from "./schedules.js";
import { type DueRun, needsSlot, SqliteSlots } from "./slots.js";
import { entryFromArray, numbered, prepareStatements, replayRows, type Statements } from "./statements.js";
import { convertToIncrementalVacuum } from "./vacuum.js";

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
  "childRuns",
  "findRun",
  "latestCompletedRun",
  "loadRuns",
  "listRuns",
  "countRuns",
  "runTags",
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
  "concurrencyQueue",
  "owners",
  "expireOwner",
  "nextWakeAt",
  "pendingRequests",
  "getRequest",
  "workflowMeta",
  "changeCounter",
  "schedules",
  "syncSchedules",
  "advanceSchedule",
  "setSchedulePaused",
  "appendAudit",
  "listAudit",
  "countAudit",
  "countExpired",
  "pruneRuns",
  "nextToExpire",
  "createPlan",
  "getPlan",
  "planRuns",
  "recordPlanOutcomes",
  "planProgress",
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
    const nativeBinding = sqliteAddon();
    db = new Database(path, {
      readonly: options.readonly ?? false,
      fileMustExist: options.readonly ?? false,
      ...(nativeBinding ? { nativeBinding } : {}),
    });
  } catch (err) {
    throw describeOpenError(path, err);
  }
  const writable = path !== ":memory:" && !options.readonly;
  try {
    db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    // The search in error text's case folding, for queries only (the file names no function of Waymark's).
    registerFoldCase(db);
    // Before the first table exists (a new file), so pruned runs' pages can go back to the file system. Not
    // where it is on already: setting it writes page 1 in a write transaction (a WAL frame at every open,
    // 1.6 ms of a resume's start, and a change other processes' watchers see).
    if (writable && db.pragma("auto_vacuum", { simple: true }) !== 2) db.pragma("auto_vacuum = INCREMENTAL");
    if (writable) setWal(db);
    db.pragma(`synchronous = ${options.durability === "full" ? "FULL" : "NORMAL"}`);
    db.pragma("temp_store = MEMORY");
    db.pragma("cache_size = -8000");
    // After a checkpoint the next writer starts the WAL over and truncates the file to this size; without it
    // the -wal file keeps the largest size it ever reached (93 MB beside a 2 MB database under churn).
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT}`);
    migrate(db, path, options.readonly ?? false);
  } catch (err) {
    db.close();
    throw describeOpenError(path, err);
  }
  if (writable) convertToIncrementalVacuum(db, path);
  if (writable) syncDirectorySoon(path);
  const store = new SqliteStore(db, path);
  if (options.backgroundCheckpoints && path !== ":memory:" && !options.readonly) {
    // The worker checkpoints; this connection does so itself only as a backstop, once the WAL holds four times
    // the limit (a starved worker thread on a loaded machine let it reach 41 MB in CI).
    const pageSize = db.pragma("page_size", { simple: true }) as number;
    db.pragma(`wal_autocheckpoint = ${Math.ceil((WAL_BACKSTOP_FACTOR * WAL_SIZE_LIMIT) / pageSize)}`);
    // Its thread starts after the first commit (see Checkpointer).
    store.checkpointer = startCheckpointer(path, WAL_SIZE_LIMIT);
  }
  return store;
}

/** Bytes the -wal file is truncated to when the WAL starts over (see journal_size_limit). */
export const WAL_SIZE_LIMIT = 4 * 1024 * 1024;

/** With background checkpoints, the engine's own connection checkpoints once the WAL holds this many limits. */
export const WAL_BACKSTOP_FACTOR = 4;

/**
 * SQLite syncs the database's directory once per connection, at its first sync of the -wal file it created
 * at open (the first write, which a resume's take-over of a dead owner's runs is): a journal commit of the
 * file system on that write's path (about 1 ms quiet, 9-12 ms measured with other processes syncing). Done
 * here on the thread pool while the process goes on reading, that sync finds the directory clean. An extra
 * sync only: SQLite's own still runs; a failure (a directory that cannot be opened) is left to it.
 */
function syncDirectorySoon(path: string): void {
  fs.open(nodePath.dirname(nodePath.resolve(path)), "r", (err, fd) => {
    if (!err) fs.fsync(fd, () => fs.close(fd, () => {}));
  });
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
  private readonly commitTx: Database.Transaction<(batch: WriteBatch) => BatchResult>;
  private readonly slots: SqliteSlots;
  // The tables a resume never touches are set up (their statements prepared) on first use.
  private scheduleTableOnce: SqliteSchedules | undefined;
  private auditTableOnce: SqliteAudit | undefined;
  private prunerOnce: SqlitePruner | undefined;
  private plansOnce: SqlitePlans | undefined;
  /** Runs every batch's statements inside the commit transaction; the torture test wraps its apply to kill mid-commit. */
  readonly writer: BatchWriter;

  constructor(db: Database.Database, path: string) {
    this.db = db;
    this.location = path;
    this.stmts = prepareStatements(db);
    this.slots = new SqliteSlots(db);
    const writer = new BatchWriter(db, this.stmts, this.slots);
    this.writer = writer;
    this.commitTx = db.transaction((batch: WriteBatch) => writer.apply(batch));
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

  private get scheduleTable(): SqliteSchedules {
    this.scheduleTableOnce ??= new SqliteSchedules(this.db, (batch) => this.writer.apply(batch));
    return this.scheduleTableOnce;
  }

  private get auditTable(): SqliteAudit {
    this.auditTableOnce ??= new SqliteAudit(this.db);
    return this.auditTableOnce;
  }

  private get pruner(): SqlitePruner {
    this.prunerOnce ??= new SqlitePruner(this.db);
    return this.prunerOnce;
  }

  private get plans(): SqlitePlans {
    this.plansOnce ??= new SqlitePlans(this.db);
    return this.plansOnce;
  }

  /** Not an async function: better-sqlite3 answers at once, and this is on every step's path. */
  commit(batch: WriteBatch): Promise<BatchResult> {
    let result: BatchResult;
    try {
      result = this.commitTx.immediate(batch);
    } catch (err) {
      return Promise.reject(this.describeWriteError(err));
    }
    this.checkpointer?.begin();
    return Promise.resolve(result);
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

  async childRuns(parentRunId: number): Promise<RunRow[]> {
    return this.stmts.childRuns.all(parentRunId) as RunRow[];
  }

  async findRun(workflow: string, key: string): Promise<RunRow | undefined> {
    return this.stmts.runByKey.get(workflow, key) as RunRow | undefined;
  }

  async latestCompletedRun(workflow: string, version: number, exceptRunId: number) {
    return this.stmts.latestCompleted.get(workflow, version, exceptRunId) as RunRow | undefined;
  }

  async loadRuns(ids: number[], options?: { packed?: boolean }): Promise<LoadedRun[]> {
    const out: LoadedRun[] = [];
    this.db.transaction(() => {
      for (const id of ids) {
        const run = this.stmts.runById.get(id) as RunRow | undefined;
        if (!run) continue;
        const { entries, packed } = replayRows(this.stmts, id, options?.packed === true);
        const messages = this.stmts.pendingMessages.all(id) as MessageRow[];
        out.push(packed ? { run, entries, messages, packed } : { run, entries, messages });
      }
    })();
    return out;
  }

  async listRuns(q: RunQuery): Promise<RunRow[]> {
    return readRuns(this.db, q);
  }

  async countRuns(): Promise<RunCount[]> {
    return this.stmts.countRuns.all() as RunCount[];
  }

  async runTags(runIds: number[]): Promise<TagRow[]> {
    if (runIds.length === 0) return [];
    return this.stmts.runTags.all(JSON.stringify(runIds)) as TagRow[];
  }

  async pendingMessageCounts(): Promise<Array<{ workflow: string; queue: string; count: number }>> {
    return this.stmts.pendingMessageCounts.all() as Array<{ workflow: string; queue: string; count: number }>;
  }

  async failureGroups(q: FailureGroupQuery): Promise<{ total: number; groups: FailureGroupRow[] }> {
    const counted = failureCountsQuery(q);
    if (counted) {
      const rows = this.db.prepare(counted.sql).all(...counted.args) as Array<
        FailureGroupRow & { total: number }
      >;
      return { total: rows[0]?.total ?? 0, groups: rows.map(({ total: _, ...g }) => g) };
    }
    const { count, groups, args } = failureGroupsQuery(q);
    const total = this.db
      .prepare(count)
      .pluck()
      .get(...args) as number;
    return { total, groups: this.db.prepare(groups).all(...args, q.limit) as FailureGroupRow[] };
  }

  async liveVersions(): Promise<Array<{ workflow: string; version: number; count: number; keys: string[] }>> {
    const rows = this.stmts.liveVersions.all() as Array<{ workflow: string; version: number; count: number }>;
    return rows.map((r) => ({ ...r, keys: this.stmts.liveKeys.all(r.workflow, r.version) as string[] }));
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
          ) as DueRun[];
          for (const d of due) {
            // A limited run takes a slot or is parked in the same transaction (see slots.ts).
            if (needsSlot(d) && !this.slots.grant(d, now)) continue;
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

  async concurrencyQueue(runId: number): Promise<ConcurrencyQueue | null> {
    return this.slots.queue(runId);
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
          this.stmts.wakeParent.run(numbered(now, runId));
          this.slots.released(runId, now);
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
    if (runIds.length === 1) return this.stmts.requestsFor.all(runIds[0]) as RequestRow[];
    // One statement for all of them: the change watcher asks for every run executing here on each change.
    return this.stmts.requestsForMany.all(JSON.stringify(runIds)) as RequestRow[];
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

  async schedules(): Promise<ScheduleRow[]> {
    return this.scheduleTable.list();
  }

  async syncSchedules(decls: ScheduleDecl[], now: number): Promise<void> {
    this.scheduleTable.sync(decls, now);
  }

  async advanceSchedule(advance: ScheduleAdvance, batch: WriteBatch | null): Promise<BatchResult | null> {
    return this.scheduleTable.advanceTo(advance, batch);
  }

  async setSchedulePaused(name: string, paused: boolean, now: number): Promise<boolean> {
    return this.scheduleTable.setPaused(name, paused, now);
  }

  async appendAudit(row: AuditAppend): Promise<number> {
    return this.auditTable.append(row);
  }

  async listAudit(query: AuditQuery): Promise<AuditRow[]> {
    return this.auditTable.list(query);
  }

  async countAudit(filter: AuditFilter): Promise<number> {
    return this.auditTable.count(filter);
  }

  async countExpired(rules: RetentionRule[]): Promise<PrunedCount[]> {
    return this.pruner.countExpired(rules);
  }

  async pruneRuns(rules: RetentionRule[], limit: number): Promise<PrunedCount[]> {
    const pruned = this.pruner.prune(rules, limit);
    this.checkpointer?.begin();
    return pruned;
  }

  async nextToExpire(rules: RetentionRule[]): Promise<Array<number | null>> {
    return this.pruner.nextToExpire(rules);
  }

  async createPlan(plan: PlanRow, runIds: number[]): Promise<void> {
    this.plans.create(plan, runIds);
  }

  async getPlan(token: string): Promise<PlanRow | undefined> {
    return this.plans.get(token);
  }

  async planRuns(
    token: string,
    o: { after: number; limit: number; pendingOnly: boolean },
  ): Promise<PlanRunRow[]> {
    return this.plans.list(token, o);
  }

  async recordPlanOutcomes(token: string, outcomes: PlanOutcome[], now: number): Promise<number[]> {
    return this.plans.recordOutcomes(token, outcomes, now);
  }

  async planProgress(token: string): Promise<Array<{ outcome: string | null; count: number }>> {
    return this.plans.progress(token);
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
