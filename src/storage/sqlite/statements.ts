// The SQLite store's statements, each prepared on its first use and kept, and how rows map to columns.

import type Database from "better-sqlite3";
import { PACK_CHUNK, PackedSteps } from "../packed-steps.js";
import { LIVE_STATUSES_SQL } from "../rows.js";
import { type EntryRow, loadedEntry, ReplayEntry } from "../store.js";

export const RUN_COLUMNS = `id, workflow, key, version, status, input, initial_state AS initialState, state, output, error,
  waiting, wait_queues AS waitQueues, wake_at AS wakeAt, owner, lease_until AS leaseUntil,
  created_at AS createdAt, updated_at AS updatedAt, finished_at AS finishedAt, failure_signature AS failureSignature,
  trace_context AS traceContext, parent_run_id AS parentRunId, wait_runs AS waitRuns,
  concurrency_key AS concurrencyKey, concurrency_limit AS concurrencyLimit, queued_at AS queuedAt`;
export const ENTRY_COLUMNS = `run_id AS runId, seq, scope, ordinal, name, kind, status, started_at AS startedAt,
  ended_at AS endedAt, input, output, error, attempts, detail, state_seq AS stateSeq, state_diff AS stateDiff`;
/** The latest completed run of a workflow version other than run ?3 (index runs_completed: one probe). */
export const LATEST_COMPLETED_SQL = `SELECT ${RUN_COLUMNS} FROM runs
    WHERE workflow = ? AND version = ? AND status = 'completed' AND id <> ?
    ORDER BY finished_at DESC, id DESC LIMIT 1`;
/** The entry columns in EntryRow's field order, for array rows. */
export const ENTRY_FIELDS = `run_id, seq, scope, ordinal, name, kind, status, started_at, ended_at, input, output,
  error, attempts, detail, state_seq, state_diff`;

/**
 * The columns loadRuns reads, in loadedEntry's order after the run id: the replay columns, then the rest of
 * the row as one JSON array, or NULL for a completed step (replay never reads its times, input or attempts).
 */
export const REPLAY_FIELDS = `seq, scope, ordinal, name, kind, status, output, detail, state_seq, state_diff,
  CASE WHEN kind = 'step' AND status = 'completed' THEN NULL
    ELSE json_array(started_at, ended_at, input, error, attempts) END`;

/**
 * A completed step with nothing but its output to replay (no detail, no state change), its output at most
 * 64 KiB: loadRuns reads these packed into one JSON array text per seq range (replayPacked).
 */
const PLAIN_STEP = `kind = 'step' AND status = 'completed' AND detail IS NULL AND state_seq IS NULL
  AND coalesce(octet_length(output), 0) <= 65536`;

/** An EntryRow from an array row selected with ENTRY_FIELDS. */
export function entryFromArray(r: unknown[]): EntryRow {
  return {
    runId: r[0] as number,
    seq: r[1] as number,
    scope: r[2] as string,
    ordinal: r[3] as number,
    name: r[4] as string,
    kind: r[5] as string,
    status: r[6] as string,
    startedAt: r[7] as number | null,
    endedAt: r[8] as number | null,
    input: r[9] as string | null,
    output: r[10] as string | null,
    error: r[11] as string | null,
    attempts: r[12] as string | null,
    detail: r[13] as string | null,
    stateSeq: r[14] as number | null,
    stateDiff: r[15] as string | null,
  };
}

/** Rows of REPLAY_FIELDS as entries (loadedEntry). */
function replayEntries(runId: number, rows: unknown[][], out: EntryRow[] = []): EntryRow[] {
  for (const r of rows) {
    out.push(
      loadedEntry(
        runId,
        r[0] as number,
        r[1] as string,
        r[2] as number,
        r[3] as string,
        r[4] as string,
        r[5] as string,
        r[6] as string | null,
        r[7] as string | null,
        r[8] as number | null,
        r[9] as string | null,
        r[10] as string | null,
      ),
    );
  }
  return out;
}

/** Joins the names and the outputs of the root's leading steps (replayPrefix): no name or JSON text holds it. */
const SEP = "\u0001";

/** Rows per packed string: bounds its length (outputs packed are at most 64 KiB each). PackedSteps' chunks. */
const PACK_SEQS = PACK_CHUNK;

/**
 * A run's history as loadRuns answers it (in seq order). better-sqlite3 pays per value it hands over, so the
 * plain completed steps, most of a long history, come packed, PACK_SEQS seqs to one text per range.
 * With `keepPacked`, the root's leading plain steps (seqs 1..n at ordinals 0..n-1, the whole of a long
 * sequence) come back as PackedSteps: their names and outputs each joined into one text a range
 * (replayPrefix), with nothing to parse and no object a step. Other plain steps come as one JSON array text
 * of 5 values a row (seq, scope, ordinal, name, output), which one JSON.parse splits: the numbers come back
 * as numbers and SQLite's JSON quoting makes any text exact, a null output included. The other entries are
 * read as rows, range by range, and only in a range the plain steps do not fill: seqs are whole numbers from
 * 1, so a range of n seqs holding n plain steps holds nothing else (a long history's other entries are its
 * last few, and their read skips the rest). A count that does not match (not expected) falls back to reading
 * the run row by row.
 */
export function replayRows(
  s: Statements,
  runId: number,
  keepPacked = false,
): { entries: EntryRow[]; packed: PackedSteps | undefined } {
  const max = (s.maxSeq.get(runId) as number | null) ?? 0;
  const others: EntryRow[] = [];
  const chunks: unknown[][] = [];
  const names: string[][] = [];
  const outputs: string[][] = [];
  let total = 0;
  // Seqs up to `packedTo` are packed; packing goes on while every range so far was a whole prefix.
  let packedTo = keepPacked ? 0 : -1;
  for (let from = 0; from < max; from += PACK_SEQS) {
    const to = Math.min(from + PACK_SEQS, max);
    let start = from;
    if (packedTo === from) {
      const [nameText, outputText, count, last, regular] = s.replayPrefix.get(runId, from, to) as [
        string | null,
        string | null,
        number,
        number | null,
        number | null,
      ];
      // Split, each text gives `count` parts unless a name or output held the separator (then not packed).
      const prefix = count > 0 && regular === count && last === from + count;
      const n = prefix ? nameText!.split(SEP) : [];
      const o = prefix && n.length === count ? outputText!.split(SEP) : [];
      if (prefix && n.length === count && o.length === count) {
        names.push(n);
        outputs.push(o);
        packedTo = from + count;
        if (packedTo === to) continue;
        start = packedTo;
      }
    }
    const [text, count] = s.replayPacked.get(runId, start, to) as [string | null, number];
    if (count < to - start)
      replayEntries(runId, s.replayOthersIn.all(runId, start, to) as unknown[][], others);
    if (count === 0 || text === null) continue;
    const f = JSON.parse(text) as unknown[];
    if (f.length !== count * 5)
      return {
        entries: replayEntries(runId, s.replayEntriesOf.all(runId) as unknown[][]),
        packed: undefined,
      };
    chunks.push(f);
    total += count;
  }
  const packed = names.length === 0 ? undefined : new PackedSteps(runId, names, outputs);
  return { entries: mergeBySeq(others, plainEntries(runId, chunks, total)), packed };
}

/** The plain steps of packed JSON arrays (5 values a row) as ReplayEntries, in seq order. */
function plainEntries(runId: number, chunks: unknown[][], total: number): EntryRow[] {
  const plain: EntryRow[] = new Array(total);
  let sorted = true;
  let last = 0;
  let n = 0;
  for (const f of chunks) {
    for (let i = 0; i < f.length; i += 5) {
      const seq = f[i] as number;
      if (seq < last) sorted = false;
      last = seq;
      plain[n++] = new ReplayEntry(
        runId,
        seq,
        f[i + 1] as string,
        f[i + 2] as number,
        f[i + 3] as string,
        "step",
        "completed",
        f[i + 4] as string | null,
        null,
        null,
        null,
      ) as unknown as EntryRow;
    }
  }
  if (!sorted) plain.sort((a, b) => a.seq - b.seq);
  return plain;
}

/** Two lists in seq order as one. */
function mergeBySeq(others: EntryRow[], plain: EntryRow[]): EntryRow[] {
  if (others.length === 0) return plain;
  if (plain.length === 0) return others;
  const out: EntryRow[] = new Array(others.length + plain.length);
  for (let i = 0, a = 0, b = 0; i < out.length; i++)
    out[i] =
      b >= plain.length || (a < others.length && others[a]!.seq < plain[b]!.seq) ? others[a++]! : plain[b++]!;
  return out;
}

export const MESSAGE_COLUMNS = `id, run_id AS runId, queue, body, sent_at AS sentAt, idempotency_key AS idempotencyKey,
  consumed_at AS consumedAt, consumed_by AS consumedBy`;

export const PATCH_COLUMNS: Record<string, string> = {
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
  failureSignature: "failure_signature",
  traceContext: "trace_context",
  waitRuns: "wait_runs",
};

/** Binds `?1, ?2...` parameters (better-sqlite3 takes them as an object keyed by number). */
export function numbered(...values: unknown[]): Record<number, unknown> {
  const out: Record<number, unknown> = {};
  values.forEach((v, i) => {
    out[i + 1] = v;
  });
  return out;
}

/** The statements the store runs. */
export interface Statements {
  insertRun: Database.Statement;
  runById: Database.Statement;
  runByKey: Database.Statement;
  ownerOf: Database.Statement;
  insertMessage: Database.Statement;
  messageByIdempotency: Database.Statement;
  wakeForMessage: Database.Statement;
  wakeIfMessageWaiting: Database.Statement;
  wakeParent: Database.Statement;
  wakeIfChildEnded: Database.Statement;
  childRuns: Database.Statement;
  latestCompleted: Database.Statement;
  upsertEntry: Database.Statement;
  deleteEntry: Database.Statement;
  consume: Database.Statement;
  unconsume: Database.Statement;
  insertRequest: Database.Statement;
  wakeForRequest: Database.Statement;
  cancelRun: Database.Statement;
  cancelEntries: Database.Statement;
  requestDone: Database.Statement;
  getRequest: Database.Statement;
  claimRun: Database.Statement;
  entriesOf: Database.Statement;
  replayEntriesOf: Database.Statement;
  replayOthersIn: Database.Statement;
  replayPacked: Database.Statement;
  replayPrefix: Database.Statement;
  maxSeq: Database.Statement;
  entriesPage: Database.Statement;
  entry: Database.Statement;
  pendingMessages: Database.Statement;
  allMessages: Database.Statement;
  messageByKey: Database.Statement;
  getMessage: Database.Statement;
  pendingMessagesLimited: Database.Statement;
  messagesSince: Database.Statement;
  maxMessageId: Database.Statement;
  due: Database.Statement;
  claim: Database.Statement;
  renew: Database.Statement;
  owners: Database.Statement;
  expireOwner: Database.Statement;
  nextWake: Database.Statement;
  nextWakeFor: Database.Statement;
  countRuns: Database.Statement;
  pendingMessageCounts: Database.Statement;
  liveVersions: Database.Statement;
  liveKeys: Database.Statement;
  insertRejection: Database.Statement;
  rejections: Database.Statement;
  registerWorkflow: Database.Statement;
  workflowMeta: Database.Statement;
  requestsAll: Database.Statement;
  requestsFor: Database.Statement;
  requestsForMany: Database.Statement;
  setTag: Database.Statement;
  runTags: Database.Statement;
}

/** A statement's SQL with how its rows come back: the first column only (pluck) or as arrays (raw). */
export interface StatementSql {
  sql: string;
  rows: "pluck" | "raw";
}
export const pluck = (sql: string): StatementSql => ({ sql, rows: "pluck" });
export const raw = (sql: string): StatementSql => ({ sql, rows: "raw" });

/**
 * Statements on `db` by name, each prepared the first time it is read, then kept. Opening a store prepares
 * none: a process that resumes one run pays for the few it runs (preparing all ~100 up front cost about
 * 3 ms at every open). A statement's SQL errors surface at its first use instead of at open.
 */
export function onFirstUse<K extends string>(
  db: Database.Database,
  specs: Record<K, string | StatementSql>,
): Record<K, Database.Statement> {
  const out = {} as Record<K, Database.Statement>;
  for (const name of Object.keys(specs) as K[]) {
    const spec = specs[name];
    let stmt: Database.Statement | undefined;
    Object.defineProperty(out, name, {
      enumerable: true,
      get(): Database.Statement {
        if (stmt) return stmt;
        if (typeof spec === "string") stmt = db.prepare(spec);
        else stmt = spec.rows === "pluck" ? db.prepare(spec.sql).pluck() : db.prepare(spec.sql).raw();
        return stmt;
      },
    });
  }
  return out;
}

/** Every statement the store runs on `db`, each prepared on first use. */
export function prepareStatements(db: Database.Database): Statements {
  return onFirstUse(db, {
    // The id only: the store builds the row from what it inserted (reading 25 columns back cost 6-11 µs a run).
    insertRun:
      pluck(`INSERT INTO runs (workflow, key, version, status, input, initial_state, state, wake_at, owner,
        lease_until, created_at, updated_at, trace_context, parent_run_id, concurrency_key, concurrency_limit)
      VALUES (@workflow, @key, @version, @status, @input, @initialState, @state, @wakeAt, @owner,
        @leaseUntil, @createdAt, @updatedAt, @traceContext, @parentRunId, @concurrencyKey, @concurrencyLimit)
      ON CONFLICT (workflow, key) DO NOTHING RETURNING id`),
    runById: `SELECT ${RUN_COLUMNS} FROM runs WHERE id = ?`,
    runByKey: `SELECT ${RUN_COLUMNS} FROM runs WHERE workflow = ? AND key = ?`,
    ownerOf: pluck("SELECT owner FROM runs WHERE id = ?"),
    insertMessage: `INSERT OR IGNORE INTO messages (run_id, queue, body, sent_at, idempotency_key)
      VALUES (?, ?, ?, ?, ?)`,
    messageByIdempotency: pluck("SELECT id FROM messages WHERE run_id = ? AND idempotency_key = ?"),
    wakeForMessage: `UPDATE runs SET wake_at = ?1 WHERE id = ?2 AND owner IS NULL
      AND instr(wait_queues, '|' || ?3 || '|') > 0 AND (wake_at IS NULL OR wake_at > ?1)`,
    wakeIfMessageWaiting: `UPDATE runs SET wake_at = ?1 WHERE id = ?2 AND EXISTS (SELECT 1 FROM messages
      WHERE run_id = ?2 AND consumed_at IS NULL AND instr(?3, '|' || queue || '|') > 0)`,
    // ?2 ended: its parent wakes if it is suspended waiting on it.
    wakeParent: `UPDATE runs SET wake_at = ?1 WHERE id = (SELECT parent_run_id FROM runs WHERE id = ?2)
      AND owner IS NULL AND instr(wait_runs, '|' || CAST(?2 AS INTEGER) || '|') > 0 AND (wake_at IS NULL OR wake_at > ?1)`,
    wakeIfChildEnded: `UPDATE runs SET wake_at = ?1 WHERE id = ?2 AND EXISTS (SELECT 1 FROM runs c
      WHERE c.parent_run_id = ?2 AND c.status IN ('completed', 'failed', 'cancelled')
        AND instr(?3, '|' || c.id || '|') > 0)`,
    childRuns: `SELECT ${RUN_COLUMNS} FROM runs WHERE parent_run_id = ? ORDER BY id`,
    latestCompleted: LATEST_COMPLETED_SQL,
    upsertEntry: `INSERT INTO entries (run_id, seq, scope, ordinal, name, kind, status, started_at,
        ended_at, input, output, error, attempts, detail, state_seq, state_diff)
      VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (run_id, seq) DO UPDATE SET scope = excluded.scope, ordinal = excluded.ordinal,
        name = excluded.name, kind = excluded.kind, status = excluded.status, started_at = excluded.started_at,
        ended_at = excluded.ended_at, input = excluded.input, output = excluded.output, error = excluded.error,
        attempts = excluded.attempts, detail = excluded.detail, state_seq = excluded.state_seq,
        state_diff = excluded.state_diff`,
    deleteEntry: "DELETE FROM entries WHERE run_id = ? AND seq = ?",
    consume:
      "UPDATE messages SET consumed_at = ?, consumed_by = ? WHERE id = ? AND run_id = ? AND consumed_at IS NULL",
    unconsume: "UPDATE messages SET consumed_at = NULL, consumed_by = NULL WHERE id = ?",
    insertRequest: "INSERT INTO requests (run_id, kind, args, created_at) VALUES (?, ?, ?, ?)",
    wakeForRequest: `UPDATE runs SET wake_at = ?1 WHERE id = ?2 AND owner IS NULL AND (wake_at IS NULL OR wake_at > ?1)`,
    cancelRun: `UPDATE runs SET status = 'cancelled', finished_at = ?1, updated_at = ?1, wake_at = NULL, waiting = NULL,
        wait_queues = NULL, wait_runs = NULL, owner = NULL, lease_until = NULL, error = ?4
      WHERE id = ?2 AND status NOT IN ('completed', 'failed', 'cancelled')
        AND (owner IS NULL OR owner = ?3 OR lease_until <= ?1)`,
    cancelEntries: `UPDATE entries SET status = 'cancelled', ended_at = ?1
      WHERE run_id = ?2 AND status IN ('running', 'waiting', 'retrying')`,
    requestDone: "UPDATE requests SET done_at = ?, result = ? WHERE id = ?",
    getRequest: `SELECT id, run_id AS runId, kind, args, created_at AS createdAt, done_at AS doneAt, result
      FROM requests WHERE id = ?`,
    claimRun: `UPDATE runs SET owner = ?2, lease_until = ?3, wake_at = ?3
      WHERE id = ?1 AND (owner IS NULL OR owner = ?2 OR lease_until <= ?4)`,
    // Rows as arrays (entryFromArray builds them): much faster than better-sqlite3's objects for long histories.
    entriesOf: raw(`SELECT ${ENTRY_FIELDS} FROM entries WHERE run_id = ? ORDER BY seq`),
    // What replay reads (loadedEntry builds the rows): a completed step without its other columns.
    replayEntriesOf: raw(`SELECT ${REPLAY_FIELDS} FROM entries WHERE run_id = ? ORDER BY seq`),
    // The same in two parts (see replayRows): the entries of a seq range that are not plain completed steps...
    replayOthersIn: raw(`SELECT ${REPLAY_FIELDS} FROM entries
      WHERE run_id = ? AND seq > ? AND seq <= ? AND NOT (${PLAIN_STEP}) ORDER BY seq`),
    // ...and the plain completed steps of a seq range as one JSON array text, 5 values a row: each row's
    // json_array without its brackets (it starts with a number and ends with a string or null, so trim takes
    // off exactly those two).
    replayPacked:
      raw(`SELECT '[' || group_concat(trim(json_array(seq, scope, ordinal, name, output), '[]'), ',')
      || ']', count(*) FROM entries WHERE run_id = ? AND seq > ? AND seq <= ? AND ${PLAIN_STEP}`),
    // ...or, for the root's leading steps (see replayRows), their names and outputs each joined by U+0001 (a
    // null output empty), with what says whether they are that prefix: their count, last seq, and how many sit
    // in the root at ordinal seq - 1 (an empty output, not JSON, is left to the rows). No ORDER BY: entries is
    // WITHOUT ROWID on (run_id, seq) and this searches that key, in seq order (a test checks the plan).
    replayPrefix:
      raw(`SELECT group_concat(name, char(1)), group_concat(coalesce(output, ''), char(1)), count(*),
      max(seq), sum(scope = '' AND ordinal = seq - 1 AND output IS NOT '') FROM entries
      WHERE run_id = ? AND seq > ? AND seq <= ? AND ${PLAIN_STEP}`),
    maxSeq: pluck("SELECT max(seq) FROM entries WHERE run_id = ?"),
    entriesPage: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE run_id = ? AND seq > ? ORDER BY seq LIMIT ?`,
    entry: `SELECT ${ENTRY_COLUMNS} FROM entries WHERE run_id = ? AND seq = ?`,
    pendingMessages: `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE run_id = ? AND consumed_at IS NULL ORDER BY id`,
    allMessages: `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE run_id = ? ORDER BY id LIMIT ?`,
    messageByKey: `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE run_id = ? AND idempotency_key = ?`,
    getMessage: `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id = ?`,
    pendingMessagesLimited: `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE run_id = ? AND consumed_at IS NULL ORDER BY id LIMIT ?`,
    messagesSince: `SELECT ${MESSAGE_COLUMNS} FROM messages WHERE id > ? ORDER BY id LIMIT ?`,
    maxMessageId: pluck("SELECT coalesce(max(id), 0) FROM messages"),
    due: `SELECT id, owner, status, workflow, concurrency_key AS concurrencyKey,
        concurrency_limit AS concurrencyLimit FROM runs WHERE wake_at <= ?1 AND (owner IS NULL OR lease_until <= ?1)
      AND (owner IS NULL OR owner != ?4)
      AND (?3 IS NULL OR workflow IN (SELECT value FROM json_each(?3)))
      ORDER BY wake_at, id LIMIT ?2`,
    claim: `UPDATE runs SET owner = @owner, lease_until = @until, wake_at = @until, updated_at = @now,
        status = CASE WHEN status IN ('completed', 'failed', 'cancelled', 'rolling-back') THEN status ELSE 'running' END,
        waiting = CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN waiting ELSE NULL END,
        wait_queues = NULL, wait_runs = NULL, queued_at = NULL
      WHERE id = @id RETURNING ${RUN_COLUMNS}`,
    renew: pluck(`UPDATE runs SET lease_until = ?1, wake_at = ?1
      WHERE owner = ?2 AND id IN (SELECT value FROM json_each(?3)) RETURNING id`),
    owners: "SELECT owner, max(lease_until) AS leaseUntil FROM runs WHERE owner IS NOT NULL GROUP BY owner",
    expireOwner: "UPDATE runs SET lease_until = ?1, wake_at = ?1 WHERE owner = ?2",
    nextWake: pluck("SELECT min(wake_at) FROM runs WHERE wake_at IS NOT NULL"),
    nextWakeFor: pluck(`SELECT min(wake_at) FROM runs WHERE wake_at IS NOT NULL
      AND workflow IN (SELECT value FROM json_each(?))`),
    pendingMessageCounts: `SELECT r.workflow, m.queue, count(*) AS count FROM messages m
      JOIN runs r ON r.id = m.run_id WHERE m.consumed_at IS NULL
        AND r.status NOT IN ('completed', 'failed', 'cancelled') GROUP BY r.workflow, m.queue`,
    countRuns:
      "SELECT workflow, version, status, count(*) AS count FROM runs GROUP BY workflow, version, status",
    // Unfinished statuses named (not NOT IN the finished ones), so the read seeks runs_status_created to the
    // live runs only: 25 ms on a million-run file where the scan took 0.2–0.7 s at every start.
    liveVersions: `SELECT workflow, version, count(*) AS count FROM runs WHERE status IN ${LIVE_STATUSES_SQL}
      GROUP BY workflow, version`,
    liveKeys:
      pluck(`SELECT key FROM runs WHERE workflow = ? AND version = ? AND status IN ${LIVE_STATUSES_SQL}
      ORDER BY id LIMIT 20`),
    insertRejection:
      "INSERT INTO rejections (run_id, queue, body, error, at) VALUES (@runId, @queue, @body, @error, @at)",
    rejections:
      "SELECT id, run_id AS runId, queue, body, error, at FROM rejections WHERE run_id = ? ORDER BY id DESC LIMIT ?",
    registerWorkflow: `INSERT INTO workflows (name, version, description, queues, actions, registered_at)
      VALUES (@name, @version, @description, @queues, @actions, @registeredAt)
      ON CONFLICT (name, version) DO UPDATE SET description = excluded.description, queues = excluded.queues,
        actions = excluded.actions, registered_at = excluded.registered_at`,
    workflowMeta: `SELECT name, version, description, queues, actions, registered_at AS registeredAt FROM workflows
      ORDER BY name, version`,
    requestsAll:
      "SELECT id, run_id AS runId, kind, args, created_at AS createdAt FROM requests WHERE done_at IS NULL ORDER BY id LIMIT ?",
    requestsFor:
      "SELECT id, run_id AS runId, kind, args, created_at AS createdAt FROM requests WHERE done_at IS NULL AND run_id = ? ORDER BY id",
    // The same for many runs in one statement (a JSON array of ids; each a probe of requests_pending).
    requestsForMany: `SELECT id, run_id AS runId, kind, args, created_at AS createdAt FROM requests
      WHERE done_at IS NULL AND run_id IN (SELECT value FROM json_each(?)) ORDER BY id`,
    // The run's created_at goes with the tag (the index orders a tag's runs by it); no such run: no row.
    setTag: `INSERT INTO run_tags (run_id, name, value, run_created_at)
      SELECT id, ?2, ?3, created_at FROM runs WHERE id = ?1
      ON CONFLICT (run_id, name) DO UPDATE SET value = excluded.value`,
    runTags: `SELECT run_id AS runId, name, value FROM run_tags
      WHERE run_id IN (SELECT value FROM json_each(?)) ORDER BY run_id, name`,
  });
}
