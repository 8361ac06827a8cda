// The physical floor: what SQLite alone costs for the writes and reads a scenario needs, with Waymark's
// pragmas (read from a store Waymark opens) and no engine. One INSERT of an entry-shaped row per step, each in
// its own transaction; SQLite's own automatic checkpoints (Waymark's background checkpointer is engine code).

import Database from "better-sqlite3";
import type { Durability } from "./common.js";
import { useWaymarkPragmas } from "./pragmas.js";

/** Waymark's entries table (src/storage/sqlite/migrations.ts), so rows and B-tree match what it writes. */
const SCHEMA = `
  CREATE TABLE IF NOT EXISTS entries (
    run_id INTEGER NOT NULL, seq INTEGER NOT NULL, scope TEXT NOT NULL, ordinal INTEGER NOT NULL,
    name TEXT NOT NULL, kind TEXT NOT NULL, status TEXT NOT NULL, started_at INTEGER, ended_at INTEGER,
    input TEXT, output TEXT, error TEXT, attempts TEXT, detail TEXT, state_seq INTEGER, state_diff TEXT,
    PRIMARY KEY (run_id, seq)
  ) WITHOUT ROWID;
  CREATE TABLE IF NOT EXISTS runs (
    id INTEGER PRIMARY KEY, workflow TEXT NOT NULL, key TEXT NOT NULL, status TEXT NOT NULL,
    state TEXT NOT NULL, wake_at INTEGER, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL,
    UNIQUE (workflow, key)
  );
`;

export class Floor {
  readonly db: Database.Database;
  private readonly insertTx: Database.Transaction<(runId: number, seq: number) => void>;
  private readonly runTx: Database.Transaction<(key: string) => number>;
  private readonly updateTx: Database.Transaction<(id: number) => void>;
  private readonly selectEntries: Database.Statement;

  constructor(path: string, durability: Durability) {
    this.db = new Database(path);
    useWaymarkPragmas(this.db, durability);
    this.db.exec(SCHEMA);
    const insert = this.db.prepare(`INSERT INTO entries (run_id, seq, scope, ordinal, name, kind, status,
      started_at, ended_at, output, attempts) VALUES (?, ?, '', ?, ?, 'step', 'completed', ?, ?, ?, ?)`);
    this.insertTx = this.db.transaction((runId: number, seq: number) => {
      const now = Date.now();
      insert.run(
        runId,
        seq,
        seq - 1,
        `s${seq - 1}`,
        now,
        now,
        String(seq - 1),
        `[{"n":1,"startedAt":${now},"status":"completed","endedAt":${now}}]`,
      );
    });
    const insertRun = this.db.prepare(`INSERT INTO runs (workflow, key, status, state, wake_at, created_at,
      updated_at) VALUES ('waiter', ?, 'waiting', '{}', NULL, ?, ?)`);
    this.runTx = this.db.transaction((key: string) => {
      const now = Date.now();
      return Number(insertRun.run(key, now, now).lastInsertRowid);
    });
    const update = this.db.prepare("UPDATE runs SET status = 'completed', updated_at = ? WHERE id = ?");
    this.updateTx = this.db.transaction((id: number) => {
      update.run(Date.now(), id);
    });
    this.selectEntries = this.db.prepare("SELECT * FROM entries WHERE run_id = ? ORDER BY seq");
  }

  /** One step's record: one INSERT, one transaction (a commit, with an fsync under FULL). */
  step(runId: number, seq: number): void {
    this.insertTx.immediate(runId, seq);
  }

  /** Many steps' records in one transaction (only to build templates quickly). */
  bulk(runId: number, fromSeq: number, count: number): void {
    this.db.transaction(() => {
      for (let i = 0; i < count; i++) this.insertTx(runId, fromSeq + i);
    })();
  }

  /** One run's creation: one INSERT, one transaction. */
  createRun(key: string): number {
    return this.runTx.immediate(key);
  }

  /** One run's state change: one UPDATE, one transaction. */
  updateRun(id: number): void {
    this.updateTx.immediate(id);
  }

  /** Reads a run's whole history (what a resume has to load). */
  load(runId: number): unknown[] {
    return this.selectEntries.all(runId);
  }

  close(): void {
    this.db.close();
  }
}
