// The embedded default store: one SQLite file through better-sqlite3.
// WAL, pragmas at open, statements prepared once, synchronous transactions only.

import fs from "node:fs";
import Database from "better-sqlite3";
import { LeaseLostError, StorageError } from "../../errors.js";
import type {
  BatchResult,
  CreateResult,
  EntryRow,
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
import { MIGRATIONS, SCHEMA_VERSION } from "./migrations.js";

/** `normal`: survives a process crash (WAL, synchronous=NORMAL). `full`: also survives power loss. */
export type Durability = "normal" | "full";

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

const RUN_COLUMNS = `id, workflow, key, version, status, input, initial_state AS initialState, state, output, error,
  waiting, wait_queues AS waitQueues, wake_at AS wakeAt, owner, lease_until AS leaseUntil,
  created_at AS createdAt, updated_at AS updatedAt, finished_at AS finishedAt`;
const ENTRY_COLUMNS = `run_id AS runId, seq, scope, ordinal, name, kind, status, started_at AS startedAt,
  ended_at AS endedAt, input, output, error, attempts, detail, state_seq AS stateSeq, state_diff AS stateDiff`;
const MESSAGE_COLUMNS = `id, run_id AS runId, queue, body, sent_at AS sentAt, idempotency_key AS idempotencyKey,
  consumed_at AS consumedAt, consumed_by AS consumedBy`;

const PATCH_COLUMNS: Record<string, string> = {
  status: "status",
  state: "state",
  output: "output",
  error: "error",
  waiting: "waiting",
  waitQueues: "wait_queues",
  wakeAt: "wake_at",
  owner: "owner",
  leaseUntil: "lease_until",
  version: "version",
  updatedAt: "updated_at",
  finishedAt: "finished_at",
};

/** Binds `?1, ?2...` parameters (better-sqlite3 takes them as an object keyed by number). */
function numbered(...values: unknown[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  values.forEach((v, i) => {
    out[i + 1] = v;
  });
  return out;
}

/** Store methods whose SQLite errors are translated (commit and claims translate their own). */
const GUARDED = [
  "getRun",
  "findRun",
  "loadRuns",
  "listRuns",
  "countRuns",
  "liveVersions",
  "listEntries",
  "getEntry",
  "allEntries",
  "listMessages",
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

/** Opens (creating if needed) a Waymark SQLite database and applies migrations. */
export function openSqliteStore(path: string, options: SqliteOptions = {}): SqliteStore {
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
    db.pragma("cache_size = -32000");
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

function describeOpenError(path: string, err: unknown): Error {
  if (err instanceof StorageError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string }).code ?? "";
  if (code === "SQLITE_NOTADB" || /not a database/.test(message)) {
    return new StorageError(
      "STORAGE_NOT_A_DATABASE",
      `"${path}" is not a SQLite database (SQLite said: ${message}). Point Waymark at another file, or move this one away; Waymark did not change it.`,
      { path },
      { cause: err },
    );
  }
  if (code === "SQLITE_CORRUPT" || /malformed/.test(message)) {
    return new StorageError(
      "STORAGE_CORRUPT",
      `"${path}" is corrupted (SQLite said: ${message}). Stop every process using it, then restore it from a backup, or save what is readable with "sqlite3 ${path} .recover > recovered.sql".`,
      { path },
      { cause: err },
    );
  }
  if (code === "SQLITE_CANTOPEN" || code === "SQLITE_READONLY" || /readonly|unable to open/.test(message)) {
    return new StorageError(
      "STORAGE_CANNOT_OPEN",
      `Cannot open "${path}" for writing (SQLite said: ${message}). Check that the folder exists and that this user may write the file and its folder (SQLite adds -wal and -shm files beside it).`,
      { path },
      { cause: err },
    );
  }
  if (code === "SQLITE_BUSY" || /locked|busy/.test(message)) {
    return new StorageError(
      "STORAGE_BUSY",
      `"${path}" is locked by another process (SQLite said: ${message}). Wait for it to finish or stop it, then try again.`,
      { path },
      { cause: err },
    );
  }
  return new StorageError(
    "STORAGE_OPEN_FAILED",
    `Cannot open "${path}": ${message}`,
    { path },
    { cause: err },
  );
}

function migrate(db: Database.Database, path: string, readonly: boolean): void {
  const version = db.pragma("user_version", { simple: true }) as number;
  if (version > SCHEMA_VERSION) {
    throw new StorageError(
      "STORAGE_NEWER_SCHEMA",
      `"${path}" was written by a newer Waymark (schema version ${version}; this one understands up to ${SCHEMA_VERSION}). Upgrade Waymark to open it; it was not changed.`,
      { path, version, supported: SCHEMA_VERSION },
    );
  }
  if (version === 0) {
    const tables = db
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
      .pluck()
      .all() as string[];
    if (tables.length > 0) {
      throw new StorageError(
        "STORAGE_FOREIGN_DATABASE",
        `"${path}" is a SQLite database of something else (it has tables ${tables.slice(0, 5).join(", ")} but no Waymark schema). Point Waymark at a new file; this one was not changed.`,
        { path, tables },
      );
    }
  }
  if (version === SCHEMA_VERSION) return;
  if (readonly) {
    throw new StorageError(
      "STORAGE_NEEDS_MIGRATION",
      `"${path}" needs a schema upgrade (version ${version} to ${SCHEMA_VERSION}) but was opened read-only. Open it once with write access.`,
      { path },
    );
  }
  db.transaction(() => {
    // Read again under the write lock: another process may have migrated meanwhile.
    const current = db.pragma("user_version", { simple: true }) as number;
    for (let v = current; v < SCHEMA_VERSION; v++) db.exec(MIGRATIONS[v]!);
    if (current < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}

/** SQLite implementation of the Store. Every method is synchronous underneath. */
export class SqliteStore implements Store {
  readonly kind = "sqlite" as const;
  readonly location: string;
  readonly db: Database.Database;
  private readonly stmts;
  private readonly patchStatements = new Map<string, Database.Statement>();
  private readonly commitTx: Database.Transaction<(batch: WriteBatch) => BatchResult>;

  constructor(db: Database.Database, path: string) {
    this.db = db;
    this.location = path;
    const p = (sql: string) => db.prepare(sql);
    this.stmts = {
      insertRun:
        p(`INSERT INTO runs (workflow, key, version, status, input, initial_state, state, wake_at, owner,
          lease_until, created_at, updated_at)
        VALUES (@workflow, @key, @version, @status, @input, @initialState, @initialState, @wakeAt, @owner,
          @leaseUntil, @now, @now)
        ON CONFLICT (workflow, key) DO NOTHING RETURNING ${RUN_COLUMNS}`),
      runById: p(`SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`),
      runByKey: p(`SELECT ${RUN_COLUMNS} FROM runs WHERE workflow = ? AND key = ?`),
      ownerOf: p("SELECT owner FROM runs WHERE id = ?").pluck(),
      insertMessage: p(`INSERT OR IGNORE INTO messages (run_id, queue, body, sent_at, idempotency_key)
        VALUES (?, ?, ?, ?, ?)`),
      messageByIdempotency: p("SELECT id FROM messages WHERE run_id = ? AND idempotency_key = ?").pluck(),
      wakeForMessage: p(`UPDATE runs SET wake_at = ?1 WHERE id = ?2 AND owner IS NULL
        AND instr(wait_queues, '|' || ?3 || '|') > 0 AND (wake_at IS NULL OR wake_at > ?1)`),
      wakeIfMessageWaiting: p(`UPDATE runs SET wake_at = ?1 WHERE id = ?2 AND EXISTS (SELECT 1 FROM messages
        WHERE run_id = ?2 AND consumed_at IS NULL AND instr(?3, '|' || queue || '|') > 0)`),
      upsertEntry: p(`INSERT INTO entries (run_id, seq, scope, ordinal, name, kind, status, started_at,
          ended_at, input, output, error, attempts, detail, state_seq, state_diff)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        ON CONFLICT (run_id, seq) DO UPDATE SET scope = excluded.scope, ordinal = excluded.ordinal,
          name = excluded.name, kind = excluded.kind, status = excluded.status, started_at = excluded.started_at,
          ended_at = excluded.ended_at, input = excluded.input, output = excluded.output, error = excluded.error,
          attempts = excluded.attempts, detail = excluded.detail, state_seq = excluded.state_seq,
          state_diff = excluded.state_diff`),
      deleteEntry: p("DELETE FROM entries WHERE run_id = ? AND seq = ?"),
      consume: p(
        "UPDATE messages SET consumed_at = ?, consumed_by = ? WHERE id = ? AND run_id = ? AND consumed_at IS NULL",
      ),
      unconsume: p("UPDATE messages SET consumed_at = NULL, consumed_by = NULL WHERE id = ?"),
      insertRequest: p("INSERT INTO requests (run_id, kind, args, created_at) VALUES (?, ?, ?, ?)"),
      wakeForRequest: p(
        `UPDATE runs SET wake_at = ?1 WHERE id = ?2 AND owner IS NULL AND (wake_at IS NULL OR wake_at > ?1)`,
      ),
      cancelRun:
        p(`UPDATE runs SET status = 'cancelled', finished_at = ?1, updated_at = ?1, wake_at = NULL, waiting = NULL,
          wait_queues = NULL, owner = NULL, lease_until = NULL, error = ?4
        WHERE id = ?2 AND status NOT IN ('completed', 'failed', 'cancelled')
          AND (owner IS NULL OR owner = ?3 OR lease_until <= ?1)`),
      cancelEntries: p(`UPDATE entries SET status = 'cancelled', ended_at = ?1
        WHERE run_id = ?2 AND status IN ('running', 'waiting', 'retrying')`),
      requestDone: p("UPDATE requests SET done_at = ?, result = ? WHERE id = ?"),
      getRequest:
        p(`SELECT id, run_id AS runId, kind, args, created_at AS createdAt, done_at AS doneAt, result
        FROM requests WHERE id = ?`),
      claimRun: p(`UPDATE runs SET owner = ?2, lease_until = ?3, wake_at = ?3
        WHERE id = ?1 AND (owner IS NULL OR owner = ?2 OR lease_until <= ?4)`),
      entriesOf: p(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE run_id = ? ORDER BY seq`),
      entriesPage: p(
        `SELECT ${ENTRY_COLUMNS} FROM entries WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
      ),
      entry: p(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE run_id = ? AND seq = ?`),
      pendingMessages: p(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE run_id = ? AND consumed_at IS NULL ORDER BY id`,
      ),
      allMessages: p(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE run_id = ? ORDER BY id LIMIT ?`),
      pendingMessagesLimited: p(
        `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE run_id = ? AND consumed_at IS NULL ORDER BY id LIMIT ?`,
      ),
      messagesSince: p(`SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id > ? ORDER BY id LIMIT ?`),
      maxMessageId: p("SELECT coalesce(max(id), 0) FROM messages").pluck(),
      due: p(`SELECT id FROM runs WHERE wake_at <= ?1 AND (owner IS NULL OR lease_until <= ?1)
        AND (owner IS NULL OR owner != ?4)
        AND (?3 IS NULL OR workflow IN (SELECT value FROM json_each(?3)))
        ORDER BY wake_at LIMIT ?2`).pluck(),
      claim: p(`UPDATE runs SET owner = @owner, lease_until = @until, wake_at = @until, updated_at = @now,
          status = CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN status ELSE 'running' END,
          waiting = CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN waiting ELSE NULL END,
          wait_queues = NULL
        WHERE id = @id RETURNING ${RUN_COLUMNS}`),
      renew: p(`UPDATE runs SET lease_until = ?1, wake_at = ?1
        WHERE owner = ?2 AND id IN (SELECT value FROM json_each(?3))`),
      owners: p(
        "SELECT owner, max(lease_until) AS leaseUntil FROM runs WHERE owner IS NOT NULL GROUP BY owner",
      ),
      expireOwner: p("UPDATE runs SET lease_until = ?1, wake_at = ?1 WHERE owner = ?2"),
      nextWake: p("SELECT min(wake_at) FROM runs WHERE wake_at IS NOT NULL").pluck(),
      nextWakeFor: p(`SELECT min(wake_at) FROM runs WHERE wake_at IS NOT NULL
        AND workflow IN (SELECT value FROM json_each(?))`).pluck(),
      countRuns: p(
        "SELECT workflow, version, status, count(*) AS count FROM runs GROUP BY workflow, version, status",
      ),
      liveVersions: p(`SELECT workflow, version, count(*) AS count, group_concat(key, char(31)) AS keys FROM (
          SELECT workflow, version, key FROM runs WHERE status NOT IN ('completed', 'failed', 'cancelled'))
        GROUP BY workflow, version`),
      insertRejection: p(
        "INSERT INTO rejections (run_id, queue, body, error, at) VALUES (@runId, @queue, @body, @error, @at)",
      ),
      rejections: p(
        "SELECT id, run_id AS runId, queue, body, error, at FROM rejections WHERE run_id = ? ORDER BY id DESC LIMIT ?",
      ),
      registerWorkflow: p(`INSERT INTO workflows (name, version, description, queues, actions, registered_at)
        VALUES (@name, @version, @description, @queues, @actions, @registeredAt)
        ON CONFLICT (name, version) DO UPDATE SET description = excluded.description, queues = excluded.queues,
          actions = excluded.actions, registered_at = excluded.registered_at`),
      workflowMeta:
        p(`SELECT name, version, description, queues, actions, registered_at AS registeredAt FROM workflows
        ORDER BY name, version`),
      requestsAll: p(
        "SELECT id, run_id AS runId, kind, args, created_at AS createdAt FROM requests WHERE done_at IS NULL ORDER BY id LIMIT ?",
      ),
      requestsFor: p(
        "SELECT id, run_id AS runId, kind, args, created_at AS createdAt FROM requests WHERE done_at IS NULL AND run_id = ? ORDER BY id",
      ),
    };
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
      }) as RunRow | undefined;
      if (row) created.push({ run: row, created: true });
      else created.push({ run: s.runByKey.get(c.workflow, c.key) as RunRow, created: false });
    }
    for (const t of batch.truncateEntries) for (const seq of t.seqs) s.deleteEntry.run(t.runId, seq);
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
    if (err instanceof StorageError || err instanceof LeaseLostError) return err;
    const code = (err as { code?: string }).code ?? "";
    const message = err instanceof Error ? err.message : String(err);
    const where = this.location;
    if (code.startsWith("SQLITE_CORRUPT") || code === "SQLITE_NOTADB") {
      return describeOpenError(where, err);
    }
    if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED")) {
      return new StorageError(
        "STORAGE_BUSY",
        `"${where}" stayed locked by another process past the busy timeout; nothing was written. Waymark retries; if this persists, find the process holding the lock.`,
        { path: where },
        { cause: err },
      );
    }
    if (code === "SQLITE_FULL" || /full/.test(message)) {
      return new StorageError(
        "STORAGE_FULL",
        `The disk holding "${where}" is full; nothing was written. Free space; Waymark retries and the runs resume.`,
        { path: where },
        { cause: err },
      );
    }
    if (code.startsWith("SQLITE_READONLY")) {
      return new StorageError(
        "STORAGE_READONLY",
        `"${where}" is read-only; nothing was written. Give this user write access to the file and its folder.`,
        { path: where },
        { cause: err },
      );
    }
    if (code.startsWith("SQLITE_IOERR")) {
      return new StorageError(
        "STORAGE_IO",
        `Writing "${where}" failed (${message}); nothing was written. Check the disk (space, quota, file size limit).`,
        { path: where },
        { cause: err },
      );
    }
    return new StorageError(
      "STORAGE_WRITE_FAILED",
      `Writing "${where}" failed: ${message}`,
      { path: where },
      { cause: err },
    );
  }

  async getRun(id: number): Promise<RunRow | undefined> {
    return this.stmts.runById.get(id) as RunRow | undefined;
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
          entries: this.stmts.entriesOf.all(id) as EntryRow[],
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
    return this.stmts.entriesOf.all(runId) as EntryRow[];
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
  ): Promise<RunRow[]> {
    const claimed: RunRow[] = [];
    try {
      this.db
        .transaction(() => {
          const ids = this.stmts.due.all(
            numbered(now, limit, workflows ? JSON.stringify(workflows) : null, owner),
          ) as number[];
          for (const id of ids)
            claimed.push(this.stmts.claim.get({ owner, until: leaseUntil, now, id }) as RunRow);
        })
        .immediate();
    } catch (err) {
      throw this.describeWriteError(err);
    }
    return claimed;
  }

  async renewLeases(owner: string, leaseUntil: number, runIds: number[]): Promise<void> {
    this.stmts.renew.run(numbered(leaseUntil, owner, JSON.stringify(runIds)));
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
