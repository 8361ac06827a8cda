// Rivet's engine on SQLite: an EngineDriver over better-sqlite3 with Waymark's pragmas.
//
// One connection per process (`RivetSqlite`) holds every workflow; each workflow gets its own driver view
// (`driver(workflowId)`), since Rivet's engine expects an isolated KV namespace per workflow instance.
// KV pairs live in one table keyed by (workflow id, key BLOB) WITHOUT ROWID, so `list(prefix)` is an ordered
// range scan (BLOBs compare as memcmp, the byte order Rivet needs); `batch` is one transaction; every other
// call is one statement (its own transaction). Alarms and messages have their own tables.

import type {
  EngineDriver,
  KVEntry,
  KVWrite,
  Message,
  WorkflowMessageDriver,
} from "@rivetkit/workflow-engine";
import Database from "better-sqlite3";
import type { Durability } from "../lib/common.js";
import { useWaymarkPragmas } from "../lib/pragmas.js";

const SCHEMA = `
  CREATE TABLE IF NOT EXISTS kv (wf TEXT NOT NULL, key BLOB NOT NULL, value BLOB NOT NULL,
    PRIMARY KEY (wf, key)) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS alarms (wf TEXT PRIMARY KEY, wake_at INTEGER NOT NULL) WITHOUT ROWID;
  CREATE INDEX IF NOT EXISTS alarms_due ON alarms (wake_at);
  CREATE TABLE IF NOT EXISTS messages (id INTEGER PRIMARY KEY, wf TEXT NOT NULL, msg_id TEXT NOT NULL,
    name TEXT NOT NULL, data TEXT, sent_at INTEGER NOT NULL);
  CREATE INDEX IF NOT EXISTS messages_wf ON messages (wf, id);
`;

/** The smallest key greater than every key starting with `prefix`, or null if there is none. */
function prefixEnd(prefix: Uint8Array): Buffer | null {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]!++;
      return end.subarray(0, i + 1);
    }
  }
  return null;
}

const buf = (b: Uint8Array) => Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/**
 * better-sqlite3 returns BLOBs as Buffers that may share a larger ArrayBuffer; Rivet's decoder reads the
 * underlying ArrayBuffer from offset 0, so each value is handed over as a Uint8Array of its own.
 */
const own = (b: Buffer) => new Uint8Array(b);

type StatementName =
  | "get"
  | "set"
  | "del"
  | "delRange"
  | "delFrom"
  | "listRange"
  | "listFrom"
  | "setAlarm"
  | "clearAlarm"
  | "addMessage"
  | "messages"
  | "deleteMessage"
  | "deleteMessageById";

/** The shared connection and its statements. */
export class RivetSqlite {
  readonly db: Database.Database;
  readonly s: Record<StatementName, Database.Statement>;
  private readonly batchTx: Database.Transaction<(wf: string, writes: KVWrite[]) => void>;
  private readonly waiters = new Map<string, Set<() => void>>();

  constructor(path: string, durability: Durability) {
    this.db = new Database(path);
    useWaymarkPragmas(this.db, durability); // the same settings as Waymark's store, read from one it opens
    this.db.exec(SCHEMA);
    const p = (sql: string) => this.db.prepare(sql);
    this.s = {
      get: p("SELECT value FROM kv WHERE wf = ? AND key = ?").pluck(),
      set: p("INSERT OR REPLACE INTO kv (wf, key, value) VALUES (?, ?, ?)"),
      del: p("DELETE FROM kv WHERE wf = ? AND key = ?"),
      delRange: p("DELETE FROM kv WHERE wf = ? AND key >= ? AND key < ?"),
      delFrom: p("DELETE FROM kv WHERE wf = ? AND key >= ?"),
      listRange: p("SELECT key, value FROM kv WHERE wf = ? AND key >= ? AND key < ? ORDER BY key"),
      listFrom: p("SELECT key, value FROM kv WHERE wf = ? AND key >= ? ORDER BY key"),
      setAlarm: p("INSERT OR REPLACE INTO alarms (wf, wake_at) VALUES (?, ?)"),
      clearAlarm: p("DELETE FROM alarms WHERE wf = ?"),
      addMessage: p("INSERT INTO messages (wf, msg_id, name, data, sent_at) VALUES (?, ?, ?, ?, ?)"),
      messages: p(
        "SELECT id, msg_id AS msgId, name, data, sent_at AS sentAt FROM messages WHERE wf = ? ORDER BY id",
      ),
      deleteMessage: p("DELETE FROM messages WHERE id = ?"),
      deleteMessageById: p("DELETE FROM messages WHERE wf = ? AND msg_id = ?"),
    };
    this.batchTx = this.db.transaction((wf: string, writes: KVWrite[]) => {
      for (const w of writes) this.s.set.run(wf, buf(w.key), buf(w.value));
    });
  }

  batch(wf: string, writes: KVWrite[]): void {
    this.batchTx.immediate(wf, writes);
  }

  /** Resolves waiters of `wf` (a message arrived). */
  notify(wf: string): void {
    const set = this.waiters.get(wf);
    if (!set) return;
    this.waiters.delete(wf);
    for (const fn of set) fn();
  }

  onMessage(wf: string, fn: () => void): () => void {
    let set = this.waiters.get(wf);
    if (!set) this.waiters.set(wf, (set = new Set()));
    set.add(fn);
    return () => set.delete(fn);
  }

  /** The driver of one workflow instance. */
  driver(workflowId: string): RivetSqliteDriver {
    return new RivetSqliteDriver(this, workflowId);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

class SqliteMessages implements WorkflowMessageDriver {
  constructor(
    private readonly store: RivetSqlite,
    private readonly wf: string,
  ) {}

  async addMessage(message: Message): Promise<void> {
    this.store.s.addMessage.run(
      this.wf,
      message.id,
      message.name,
      JSON.stringify(message.data ?? null),
      message.sentAt,
    );
    this.store.notify(this.wf);
  }

  async receiveMessages(opts: {
    names?: readonly string[];
    count: number;
    completable: boolean;
  }): Promise<Message[]> {
    const names = opts.names && opts.names.length > 0 ? new Set(opts.names) : null;
    const rows = this.store.s.messages.all(this.wf) as Array<{
      id: number;
      msgId: string;
      name: string;
      data: string;
      sentAt: number;
    }>;
    const picked = rows.filter((r) => !names || names.has(r.name)).slice(0, Math.max(1, opts.count));
    if (!opts.completable) for (const r of picked) this.store.s.deleteMessage.run(r.id);
    return picked.map((r) => ({
      id: r.msgId,
      name: r.name,
      data: JSON.parse(r.data) as unknown,
      sentAt: r.sentAt,
      ...(opts.completable ? { complete: async () => this.completeMessage(r.msgId) } : {}),
    }));
  }

  async completeMessage(messageId: string): Promise<void> {
    this.store.s.deleteMessageById.run(this.wf, messageId);
  }
}

/** One workflow's view of the shared SQLite KV. */
export class RivetSqliteDriver implements EngineDriver {
  readonly workerPollInterval = 100;
  readonly messageDriver: WorkflowMessageDriver;

  constructor(
    private readonly store: RivetSqlite,
    private readonly wf: string,
  ) {
    this.messageDriver = new SqliteMessages(store, wf);
  }

  async get(key: Uint8Array): Promise<Uint8Array | null> {
    const value = this.store.s.get.get(this.wf, buf(key)) as Buffer | undefined;
    return value ? own(value) : null;
  }

  async set(key: Uint8Array, value: Uint8Array): Promise<void> {
    this.store.s.set.run(this.wf, buf(key), buf(value));
  }

  async delete(key: Uint8Array): Promise<void> {
    this.store.s.del.run(this.wf, buf(key));
  }

  async batchDelete(keys: Uint8Array[]): Promise<void> {
    this.store.db.transaction(() => {
      for (const key of keys) this.store.s.del.run(this.wf, buf(key));
    })();
  }

  async deletePrefix(prefix: Uint8Array): Promise<void> {
    const end = prefixEnd(prefix);
    if (end) this.store.s.delRange.run(this.wf, buf(prefix), end);
    else this.store.s.delFrom.run(this.wf, buf(prefix));
  }

  async deleteRange(start: Uint8Array, end: Uint8Array): Promise<void> {
    this.store.s.delRange.run(this.wf, buf(start), buf(end));
  }

  async list(prefix: Uint8Array): Promise<KVEntry[]> {
    const end = prefixEnd(prefix);
    const rows = (
      end
        ? this.store.s.listRange.all(this.wf, buf(prefix), end)
        : this.store.s.listFrom.all(this.wf, buf(prefix))
    ) as Array<{ key: Buffer; value: Buffer }>;
    return rows.map((r) => ({ key: own(r.key), value: own(r.value) }));
  }

  async batch(writes: KVWrite[]): Promise<void> {
    this.store.batch(this.wf, writes);
  }

  async setAlarm(workflowId: string, wakeAt: number): Promise<void> {
    this.store.s.setAlarm.run(workflowId, wakeAt);
  }

  async clearAlarm(workflowId: string): Promise<void> {
    this.store.s.clearAlarm.run(workflowId);
  }

  async waitForMessages(messageNames: string[], abortSignal: AbortSignal): Promise<void> {
    const names = new Set(messageNames);
    const pending = () =>
      (this.store.s.messages.all(this.wf) as Array<{ name: string }>).some(
        (m) => names.size === 0 || names.has(m.name),
      );
    while (!pending()) {
      if (abortSignal.aborted) throw abortSignal.reason ?? new Error("aborted");
      await new Promise<void>((resolve) => {
        const off = this.store.onMessage(this.wf, resolve);
        abortSignal.addEventListener(
          "abort",
          () => {
            off();
            resolve();
          },
          { once: true },
        );
      });
    }
  }
}
