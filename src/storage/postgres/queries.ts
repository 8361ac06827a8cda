// The PostgreSQL store's statements (other than the batch write's, in batch.ts), built once per schema.

import { LIVE_STATUSES_SQL } from "../rows.js";
import { latestCompletedSql } from "./run-queries.js";
import { NEEDS_SLOT } from "./slots.js";
import {
  ENTRY_COLUMNS,
  MESSAGE_COLUMNS,
  REQUEST_COLUMNS,
  runColumns,
  type Tables,
  TERMINAL_SQL,
} from "./sql.js";

/** The store's statements for one schema, by purpose (each prepared once per connection by name). */
export function statements(t: Tables) {
  const RUN = runColumns();
  return {
    runById: `SELECT ${RUN} FROM ${t.runs} WHERE id = $1`,
    runByKey: `SELECT ${RUN} FROM ${t.runs} WHERE workflow = $1 AND key = $2`,
    childRuns: `SELECT ${RUN} FROM ${t.runs} WHERE parent_run_id = $1 ORDER BY id`,
    latestCompleted: latestCompletedSql(t),
    // Taken before a run ends outside a batch (cancelRun): see BatchWriter's lock order.
    lockParent: `SELECT id FROM ${t.runs} WHERE id = (SELECT parent_run_id FROM ${t.runs} WHERE id = $1) FOR UPDATE`,
    wakeParent: `UPDATE ${t.runs} p SET wake_at = $1 FROM ${t.runs} c
      WHERE c.id = ANY($2::bigint[]) AND p.id = c.parent_run_id AND p.owner IS NULL
        AND strpos(p.wait_runs, '|' || c.id || '|') > 0 AND (p.wake_at IS NULL OR p.wake_at > $1)`,
    runsByIds: `SELECT ${RUN} FROM ${t.runs} WHERE id = ANY($1::bigint[])`,
    runTags: `SELECT run_id AS "runId", name, value FROM ${t.runTags} WHERE run_id = ANY($1::bigint[])
      ORDER BY run_id, name COLLATE "C"`,
    // What replay reads (loadedEntry builds the rows): a completed step without its other columns.
    replayEntriesOfRuns: `SELECT run_id AS "runId", seq, scope, ordinal, name, kind, status, output, detail,
      state_seq AS "stateSeq", state_diff AS "stateDiff",
      CASE WHEN kind = 'step' AND status = 'completed' THEN NULL
        ELSE json_build_array(started_at, ended_at, input, error, attempts)::text END AS rest
      FROM ${t.entries} WHERE run_id = ANY($1::bigint[]) ORDER BY run_id, seq`,
    pendingOfRuns: `SELECT ${MESSAGE_COLUMNS} FROM ${t.messages} WHERE run_id = ANY($1::bigint[])
      AND consumed_at IS NULL ORDER BY id`,
    entriesOf: `SELECT ${ENTRY_COLUMNS} FROM ${t.entries} WHERE run_id = $1 ORDER BY seq`,
    entriesPage: `SELECT ${ENTRY_COLUMNS} FROM ${t.entries} WHERE run_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`,
    entry: `SELECT ${ENTRY_COLUMNS} FROM ${t.entries} WHERE run_id = $1 AND seq = $2`,
    allMessages: `SELECT ${MESSAGE_COLUMNS} FROM ${t.messages} WHERE run_id = $1 ORDER BY id LIMIT $2`,
    messageByKey: `SELECT ${MESSAGE_COLUMNS} FROM ${t.messages} WHERE run_id = $1 AND idempotency_key = $2`,
    pendingMessages: `SELECT ${MESSAGE_COLUMNS} FROM ${t.messages} WHERE run_id = $1 AND consumed_at IS NULL
      ORDER BY id LIMIT $2`,
    rejections: `SELECT id, run_id AS "runId", queue, body, error, at FROM ${t.rejections} WHERE run_id = $1
      ORDER BY id DESC LIMIT $2`,
    messagesSince: `SELECT ${MESSAGE_COLUMNS} FROM ${t.messages} WHERE id > $1 ORDER BY id LIMIT $2`,
    getMessage: `SELECT ${MESSAGE_COLUMNS} FROM ${t.messages} WHERE id = $1`,
    maxMessageId: `SELECT coalesce(max(id), 0) AS id FROM ${t.messages}`,
    pendingMessageCounts: `SELECT r.workflow, m.queue, count(*)::int AS count FROM ${t.messages} m
      JOIN ${t.runs} r ON r.id = m.run_id WHERE m.consumed_at IS NULL
        AND r.status NOT IN ('completed', 'failed', 'cancelled') GROUP BY r.workflow, m.queue`,
    countRuns: `SELECT workflow, version, status, count(*) AS count FROM ${t.runs}
      GROUP BY workflow, version, status ORDER BY workflow COLLATE "C", version, status COLLATE "C"`,
    liveVersions: `SELECT workflow, version, count(*) AS count, (array_agg(key ORDER BY id))[1:20] AS keys
      FROM ${t.runs} WHERE status IN ${LIVE_STATUSES_SQL} GROUP BY workflow, version`,
    claimDue: `WITH due AS (
        SELECT id, owner FROM ${t.runs}
        WHERE wake_at <= $1 AND (owner IS NULL OR lease_until <= $1) AND (owner IS NULL OR owner <> $2)
          AND ($4::text[] IS NULL OR workflow = ANY($4::text[])) AND NOT ${NEEDS_SLOT}
        ORDER BY wake_at LIMIT $3 FOR UPDATE SKIP LOCKED)
      UPDATE ${t.runs} r SET owner = $2, lease_until = $5, wake_at = $5, updated_at = $1,
        status = CASE WHEN r.status IN ${TERMINAL_SQL} OR r.status = 'rolling-back' THEN r.status ELSE 'running' END,
        waiting = CASE WHEN r.status IN ${TERMINAL_SQL} THEN r.waiting ELSE NULL END,
        wait_queues = NULL, wait_runs = NULL, queued_at = NULL
      FROM due WHERE r.id = due.id RETURNING ${runColumns("r.")}, due.owner AS "takenFrom"`,
    renew: `UPDATE ${t.runs} SET lease_until = $1, wake_at = $1
      WHERE id IN (SELECT id FROM ${t.runs} WHERE owner = $2 AND id = ANY($3::bigint[]) ORDER BY id FOR UPDATE)
      RETURNING id`,
    owners: `SELECT owner, max(lease_until) AS "leaseUntil" FROM ${t.runs} WHERE owner IS NOT NULL GROUP BY owner`,
    expireOwner: `UPDATE ${t.runs} SET lease_until = $1, wake_at = $1
      WHERE id IN (SELECT id FROM ${t.runs} WHERE owner = $2 ORDER BY id FOR UPDATE)`,
    nextWake: `SELECT min(wake_at) AS at FROM ${t.runs} WHERE wake_at IS NOT NULL
      AND ($1::text[] IS NULL OR workflow = ANY($1::text[]))`,
    cancelRun: `UPDATE ${t.runs} SET status = 'cancelled', finished_at = $1, updated_at = $1, wake_at = NULL,
        waiting = NULL, wait_queues = NULL, wait_runs = NULL, owner = NULL, lease_until = NULL, error = $4
      WHERE id = $2 AND status NOT IN ${TERMINAL_SQL} AND (owner IS NULL OR owner = $3 OR lease_until <= $1)`,
    cancelEntries: `UPDATE ${t.entries} SET status = 'cancelled', ended_at = $1
      WHERE run_id = $2 AND status IN ('running', 'waiting', 'retrying')`,
    slotOfRun: `SELECT workflow, concurrency_key AS key, concurrency_limit AS "limit" FROM ${t.runs} WHERE id = $1`,
    claimRun: `UPDATE ${t.runs} SET owner = $2, lease_until = $3, wake_at = $3
      WHERE id = $1 AND (owner IS NULL OR owner = $2 OR lease_until <= $4)`,
    getRequest: `SELECT ${REQUEST_COLUMNS}, done_at AS "doneAt", result FROM ${t.requests} WHERE id = $1`,
    requestsAll: `SELECT ${REQUEST_COLUMNS} FROM ${t.requests} WHERE done_at IS NULL ORDER BY id LIMIT $1`,
    requestsFor: `SELECT ${REQUEST_COLUMNS} FROM ${t.requests} WHERE done_at IS NULL AND run_id = ANY($1::bigint[])
      ORDER BY id`,
    registerWorkflows: `INSERT INTO ${t.workflows} (name, version, description, queues, actions, registered_at)
      SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::bigint[])
      ON CONFLICT (name, version) DO UPDATE SET description = excluded.description, queues = excluded.queues,
        actions = excluded.actions, registered_at = excluded.registered_at`,
    workflowMeta: `SELECT name, version, description, queues, actions, registered_at AS "registeredAt"
      FROM ${t.workflows} ORDER BY name COLLATE "C", version`,
  };
}
