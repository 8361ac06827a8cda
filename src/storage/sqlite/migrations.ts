import type Database from "better-sqlite3";
import { StorageError } from "../../errors.js";
import { storedSignature } from "../../failure-signature.js";
import type { EntryRow } from "../store.js";
import { ENTRY_COLUMNS } from "./statements.js";

/** A day of failures in failure_counts: coalesce(finished_at, updated_at) / DAY_MS. */
export const FAILURE_DAY_MS = 86_400_000;

/** A run counted in failure_counts: `r` is new or old in a trigger, runs in a query. */
const failing = (r: string) => `${r}.failure_signature IS NOT NULL AND ${r}.status IN ('failed', 'retrying')`;
const failureDay = (r: string) => `coalesce(${r}.finished_at, ${r}.updated_at) / ${FAILURE_DAY_MS}`;
/** The old and new row count in the same bucket and the same way (most updates of a failing run). */
const sameBucket = `old.failure_signature IS new.failure_signature AND old.workflow = new.workflow
    AND old.status = new.status AND ${failureDay("old")} = ${failureDay("new")}`;
const countIn = (r: string) => `INSERT INTO failure_counts (day, signature, workflow, runs, retrying)
      VALUES (${failureDay(r)}, ${r}.failure_signature, ${r}.workflow, 1, ${r}.status = 'retrying')
      ON CONFLICT (day, signature, workflow) DO UPDATE SET runs = runs + 1, retrying = retrying + excluded.retrying;`;
const countOut = (r: string) => {
  const bucket = `day = ${failureDay(r)} AND signature = ${r}.failure_signature AND workflow = ${r}.workflow`;
  return `UPDATE failure_counts SET runs = runs - 1, retrying = retrying - (${r}.status = 'retrying') WHERE ${bucket};
      DELETE FROM failure_counts WHERE ${bucket} AND runs <= 0;`;
};

const FAILURE_COUNTS_SQLITE = `
  CREATE TABLE failure_counts (
    day INTEGER NOT NULL,
    signature TEXT NOT NULL,
    workflow TEXT NOT NULL,
    runs INTEGER NOT NULL,
    retrying INTEGER NOT NULL,
    PRIMARY KEY (day, signature, workflow)
  ) WITHOUT ROWID;
  CREATE INDEX runs_failure_at ON runs (failure_signature, workflow, coalesce(finished_at, updated_at), status)
    WHERE failure_signature IS NOT NULL AND status IN ('failed', 'retrying');
  CREATE INDEX runs_failure_created ON runs (failure_signature, workflow, created_at, id)
    WHERE failure_signature IS NOT NULL AND status IN ('failed', 'retrying');
  CREATE TRIGGER failure_counts_insert AFTER INSERT ON runs WHEN ${failing("new")}
    BEGIN ${countIn("new")} END;
  CREATE TRIGGER failure_counts_leave AFTER UPDATE ON runs WHEN ${failing("old")} AND NOT (${sameBucket})
    BEGIN ${countOut("old")} END;
  CREATE TRIGGER failure_counts_enter AFTER UPDATE ON runs WHEN ${failing("new")} AND NOT (${sameBucket})
    BEGIN ${countIn("new")} END;
  CREATE TRIGGER failure_counts_delete AFTER DELETE ON runs WHEN ${failing("old")}
    BEGIN ${countOut("old")} END;
  INSERT INTO failure_counts (day, signature, workflow, runs, retrying)
    SELECT ${failureDay("runs")}, failure_signature, workflow, count(*), sum(status = 'retrying')
    FROM runs WHERE ${failing("runs")} GROUP BY 1, 2, 3;`;

// Ordered schema migrations; `PRAGMA user_version` records how many have been applied.
// Append only: never edit a migration that has shipped.

export const MIGRATIONS: readonly string[] = [
  `
  CREATE TABLE runs (
    id INTEGER PRIMARY KEY,
    workflow TEXT NOT NULL,
    key TEXT NOT NULL,
    version INTEGER NOT NULL,
    status TEXT NOT NULL,
    input TEXT,
    initial_state TEXT NOT NULL,
    state TEXT NOT NULL,
    output TEXT,
    error TEXT,
    waiting TEXT,
    wait_queues TEXT,
    wake_at INTEGER,
    owner TEXT,
    lease_until INTEGER,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    finished_at INTEGER,
    UNIQUE (workflow, key)
  );
  CREATE INDEX runs_wake ON runs (wake_at) WHERE wake_at IS NOT NULL;
  CREATE INDEX runs_owner ON runs (owner) WHERE owner IS NOT NULL;
  CREATE INDEX runs_created ON runs (created_at, id);
  CREATE INDEX runs_workflow_created ON runs (workflow, created_at, id);
  CREATE INDEX runs_status_created ON runs (status, created_at, id);

  CREATE TABLE entries (
    run_id INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    scope TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at INTEGER,
    ended_at INTEGER,
    input TEXT,
    output TEXT,
    error TEXT,
    attempts TEXT,
    detail TEXT,
    state_seq INTEGER,
    state_diff TEXT,
    PRIMARY KEY (run_id, seq)
  ) WITHOUT ROWID;

  CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    queue TEXT NOT NULL,
    body TEXT NOT NULL,
    sent_at INTEGER NOT NULL,
    idempotency_key TEXT,
    consumed_at INTEGER,
    consumed_by INTEGER
  );
  CREATE UNIQUE INDEX messages_idempotency ON messages (run_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
  CREATE INDEX messages_pending ON messages (run_id, id) WHERE consumed_at IS NULL;

  CREATE TABLE requests (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    kind TEXT NOT NULL,
    args TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    done_at INTEGER,
    result TEXT
  );
  CREATE INDEX requests_pending ON requests (run_id, id) WHERE done_at IS NULL;

  CREATE TABLE rejections (
    id INTEGER PRIMARY KEY,
    run_id INTEGER NOT NULL,
    queue TEXT NOT NULL,
    body TEXT NOT NULL,
    error TEXT NOT NULL,
    at INTEGER NOT NULL
  );
  CREATE INDEX rejections_run ON rejections (run_id, id);

  CREATE TABLE workflows (
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    description TEXT,
    queues TEXT NOT NULL,
    actions TEXT NOT NULL,
    registered_at INTEGER NOT NULL,
    PRIMARY KEY (name, version)
  );
  `,
  // 2: each failed or retrying run's failure signature, stored when it fails (backfilled below).
  `
  ALTER TABLE runs ADD COLUMN failure_signature TEXT;
  CREATE INDEX runs_failure ON runs (failure_signature, workflow) WHERE failure_signature IS NOT NULL;
  `,
  // 3: the run's trace context (a W3C traceparent), so a run resumed in another process continues its trace.
  `
  ALTER TABLE runs ADD COLUMN trace_context TEXT;
  `,
  // 4: child runs: the run that started a run (ctx.child), and the child runs a suspended run waits on.
  `
  ALTER TABLE runs ADD COLUMN parent_run_id INTEGER;
  ALTER TABLE runs ADD COLUMN wait_runs TEXT;
  CREATE INDEX runs_parent ON runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
  `,
  // 5: schedules (setup({ schedules })): the next firing of each, paused or not, and its latest firing.
  `
  CREATE TABLE schedules (
    name TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    spec TEXT NOT NULL,
    next_due INTEGER,
    paused INTEGER NOT NULL DEFAULT 0,
    orphaned INTEGER NOT NULL DEFAULT 0,
    last_due INTEGER,
    last_outcome TEXT,
    last_run_id INTEGER,
    updated_at INTEGER NOT NULL
  );
  `,
  // 6: the latest completed run of a workflow version (compare_runs' default other run, diagnose_run's sibling).
  `
  CREATE INDEX runs_completed ON runs (workflow, version, finished_at, id) WHERE status = 'completed';
  `,
  // 7: concurrency limits (workflow({ concurrency })): the run's key value and limit, and since when it is
  // queued for a slot; indexed for counting a key's slot holders and finding its oldest queued runs.
  `
  ALTER TABLE runs ADD COLUMN concurrency_key TEXT;
  ALTER TABLE runs ADD COLUMN concurrency_limit INTEGER;
  ALTER TABLE runs ADD COLUMN queued_at INTEGER;
  CREATE INDEX runs_slots ON runs (workflow, concurrency_key, status) WHERE concurrency_key IS NOT NULL;
  CREATE INDEX runs_slot_queue ON runs (workflow, concurrency_key, id) WHERE queued_at IS NOT NULL;
  `,
  // 8: the audit of every write (MCP, inspector, CLI): append-only, the triggers refuse UPDATE and DELETE.
  `
  CREATE TABLE audit (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    at INTEGER NOT NULL,
    surface TEXT NOT NULL,
    client TEXT NOT NULL,
    action TEXT NOT NULL,
    workflow TEXT,
    run_key TEXT,
    run_id INTEGER,
    args TEXT NOT NULL,
    args_cut INTEGER NOT NULL,
    ok INTEGER NOT NULL,
    error_code TEXT,
    error_message TEXT
  );
  CREATE INDEX audit_run ON audit (run_id, id) WHERE run_id IS NOT NULL;
  CREATE INDEX audit_target ON audit (workflow, run_key, id);
  CREATE INDEX audit_at ON audit (at, id);
  CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit is append-only: its rows cannot be changed'); END;
  CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
    BEGIN SELECT RAISE(ABORT, 'the audit is append-only: its rows cannot be deleted'); END;
  `,
  // 9: retention: finding expired runs is a range read per workflow and status, and deleting one's rows reads
  // an index per table (messages and requests had only partial indexes on their pending rows).
  `
  CREATE INDEX runs_finished ON runs (workflow, status, finished_at) WHERE finished_at IS NOT NULL;
  CREATE INDEX messages_run ON messages (run_id, id);
  CREATE INDEX requests_run ON requests (run_id, id);
  `,
  // 10: bulk plans (replay_runs, cancel_runs): the runs a dry run pinned, and what became of each.
  `
  CREATE TABLE bulk_plans (
    token TEXT PRIMARY KEY,
    action TEXT NOT NULL,
    spec TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    expires_at INTEGER NOT NULL,
    total INTEGER NOT NULL
  );
  CREATE TABLE bulk_plan_runs (
    token TEXT NOT NULL,
    position INTEGER NOT NULL,
    run_id INTEGER NOT NULL,
    outcome TEXT,
    reason TEXT,
    done_at INTEGER,
    PRIMARY KEY (token, position)
  );
  `,
  // 11: tags to find runs by (getOrCreate's tags, step.tag): one row per run and name. The run's created_at is
  // copied in so a tag filter reads its page newest first straight from the (name, value, ...) index.
  `
  CREATE TABLE run_tags (
    run_id INTEGER NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    run_created_at INTEGER NOT NULL,
    PRIMARY KEY (run_id, name)
  ) WITHOUT ROWID;
  CREATE INDEX run_tags_find ON run_tags (name, value, run_created_at, run_id);
  `,
  // 12: failure counts (list_failures at any scale): failing runs counted by day of failure, signature and
  // workflow, kept by triggers in the transaction of every write that makes a run fail or stop failing; one
  // index finds a group's first and last failure and counts the part of a day a window starts in, the other
  // reads a group's newest runs (list_failures' keys, replay_runs by signature) without scanning its workflow.
  `
  ${FAILURE_COUNTS_SQLITE}
  `,
  // 13: run counts by workflow, version and status (the inspector's runs list, list_workflows, metrics, the
  // pruner) read from an index that covers them: on a million runs 80-120 ms instead of 1.4 s of row lookups.
  `
  CREATE INDEX runs_counts ON runs (workflow, version, status);
  `,
  // 14: a search in error text (list_runs errorContains) walks only the runs that have an error, newest first:
  // a string no run's error holds took 0.5-3.4 s over a million runs (every run visited), now the failing few.
  `
  CREATE INDEX runs_error_created ON runs (created_at, id) WHERE error IS NOT NULL;
  `,
  // 15: error text looked up by its trigrams (list_runs errorContains of 3 characters or more): an FTS5 index
  // of every run's error (trigram tokenizer, case folded), contentless and without positions (a row holding all
  // of a string's trigrams is a candidate; the string itself is checked on runs.error), kept by triggers in
  // the transaction of every write that sets, changes or clears an error or deletes a run. A string no run's
  // error holds answers from the index alone instead of reading every failed run (160 ms on a million runs).
  `
  CREATE VIRTUAL TABLE run_errors USING fts5(error, content = '', contentless_delete = 1, tokenize = 'trigram',
    detail = none);
  CREATE TRIGGER run_errors_insert AFTER INSERT ON runs WHEN new.error IS NOT NULL
    BEGIN INSERT INTO run_errors (rowid, error) VALUES (new.id, new.error); END;
  CREATE TRIGGER run_errors_update AFTER UPDATE OF id, error ON runs
    WHEN old.error IS NOT new.error OR old.id <> new.id
    BEGIN
      DELETE FROM run_errors WHERE rowid = old.id;
      INSERT INTO run_errors (rowid, error) SELECT new.id, new.error WHERE new.error IS NOT NULL;
    END;
  CREATE TRIGGER run_errors_delete AFTER DELETE ON runs WHEN old.error IS NOT NULL
    BEGIN DELETE FROM run_errors WHERE rowid = old.id; END;
  INSERT INTO run_errors (rowid, error) SELECT id, error FROM runs WHERE error IS NOT NULL;
  `,
  // 16: the search in error text reads the error's message, what a person reads, not its JSON (where a quote,
  // a backslash or a newline is escaped, and keys, name and stack match any search): run_errors holds each
  // error's message (the whole text when the error is not JSON or holds no message), the same expression the
  // queries check (ERROR_TEXT in run-queries.ts); the triggers are made again and the index rebuilt.
  `
  DROP TRIGGER run_errors_insert;
  DROP TRIGGER run_errors_update;
  DROP TRIGGER run_errors_delete;
  DROP TABLE run_errors;
  CREATE VIRTUAL TABLE run_errors USING fts5(message, content = '', contentless_delete = 1, tokenize = 'trigram',
    detail = none);
  CREATE TRIGGER run_errors_insert AFTER INSERT ON runs WHEN new.error IS NOT NULL
    BEGIN INSERT INTO run_errors (rowid, message) VALUES (new.id, CASE WHEN json_valid(new.error) THEN coalesce(json_extract(new.error, '$.message'), new.error) ELSE new.error END); END;
  CREATE TRIGGER run_errors_update AFTER UPDATE OF id, error ON runs
    WHEN old.error IS NOT new.error OR old.id <> new.id
    BEGIN
      DELETE FROM run_errors WHERE rowid = old.id;
      INSERT INTO run_errors (rowid, message)
        SELECT new.id, CASE WHEN json_valid(new.error) THEN coalesce(json_extract(new.error, '$.message'), new.error) ELSE new.error END WHERE new.error IS NOT NULL;
    END;
  CREATE TRIGGER run_errors_delete AFTER DELETE ON runs WHEN old.error IS NOT NULL
    BEGIN DELETE FROM run_errors WHERE rowid = old.id; END;
  INSERT INTO run_errors (rowid, message)
    SELECT id, CASE WHEN json_valid(error) THEN coalesce(json_extract(error, '$.message'), error) ELSE error END FROM runs WHERE error IS NOT NULL;
  `,
  // 17: a search of 1 or 2 characters (no trigram of its own) through run_errors' terms: each message is
  // indexed with two U+E000 after it (INDEX_END in short-search.ts), so every place such a string occurs in a
  // message, its last letters and a message of 1 or 2 letters too, begins a trigram, and the trigrams that
  // begin with it are a range of the index's terms (fts5vocab): none or a few when few errors hold it, where
  // every run with an error was read (120 ms on a million runs). The triggers are made again, the index rebuilt.
  `
  DROP TRIGGER run_errors_insert;
  DROP TRIGGER run_errors_update;
  DROP TRIGGER run_errors_delete;
  DROP TABLE run_errors;
  CREATE VIRTUAL TABLE run_errors USING fts5(message, content = '', contentless_delete = 1, tokenize = 'trigram',
    detail = none);
  CREATE TRIGGER run_errors_insert AFTER INSERT ON runs WHEN new.error IS NOT NULL
    BEGIN INSERT INTO run_errors (rowid, message) VALUES (new.id, (CASE WHEN json_valid(new.error) THEN coalesce(json_extract(new.error, '$.message'), new.error) ELSE new.error END) || char(57344, 57344)); END;
  CREATE TRIGGER run_errors_update AFTER UPDATE OF id, error ON runs
    WHEN old.error IS NOT new.error OR old.id <> new.id
    BEGIN
      DELETE FROM run_errors WHERE rowid = old.id;
      INSERT INTO run_errors (rowid, message)
        SELECT new.id, (CASE WHEN json_valid(new.error) THEN coalesce(json_extract(new.error, '$.message'), new.error) ELSE new.error END) || char(57344, 57344) WHERE new.error IS NOT NULL;
    END;
  CREATE TRIGGER run_errors_delete AFTER DELETE ON runs WHEN old.error IS NOT NULL
    BEGIN DELETE FROM run_errors WHERE rowid = old.id; END;
  INSERT INTO run_errors (rowid, message)
    SELECT id, (CASE WHEN json_valid(error) THEN coalesce(json_extract(error, '$.message'), error) ELSE error END) || char(57344, 57344) FROM runs WHERE error IS NOT NULL;
  `,
];

/** Data a migration computes in code, run right after its SQL in the same transaction (by migration index). */
const BACKFILLS: Record<number, (db: Database.Database) => void> = {
  1: (db) => {
    const runs = db.prepare(
      "SELECT id, workflow, status, error, waiting FROM runs WHERE status IN ('failed', 'retrying') AND id > ? ORDER BY id LIMIT 500",
    );
    const entries = db.prepare(`SELECT ${ENTRY_COLUMNS} FROM entries WHERE run_id = ? ORDER BY seq`);
    const set = db.prepare("UPDATE runs SET failure_signature = ? WHERE id = ?");
    for (let after = 0; ; ) {
      const page = runs.all(after) as Array<{
        id: number;
        workflow: string;
        status: string;
        error: string | null;
        waiting: string | null;
      }>;
      for (const run of page) {
        const signature = storedSignature(run, () => entries.all(run.id) as EntryRow[]);
        if (signature) set.run(signature, run.id);
      }
      if (page.length < 500) break;
      after = page.at(-1)!.id;
    }
  },
};

/** The schema version this build writes; a database above it was written by a newer Waymark. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** Applies the migrations a database lacks; refuses newer and foreign databases. */
export function migrate(db: Database.Database, path: string, readonly: boolean): void {
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
    for (let v = current; v < SCHEMA_VERSION; v++) {
      db.exec(MIGRATIONS[v]!);
      BACKFILLS[v]?.(db);
    }
    if (current < SCHEMA_VERSION) db.pragma(`user_version = ${SCHEMA_VERSION}`);
  }).immediate();
}
