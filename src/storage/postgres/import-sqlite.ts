// Copies a SQLite database into a PostgreSQL one (what `waymark migrate` does): every run, entry, tag,
// message, request, rejection, published workflow, schedule, audit row and bulk plan, in one transaction.
//
// IMPORTANT: new ids come from the target's sequences in the source's order, so ids keep their relative
// order; references to run ids follow them; JSON text is copied as is. A target that already holds a run
// with the same workflow and key refuses the copy, and so does a source some process still executes.

import fs from "node:fs";
import type Database from "better-sqlite3";
import { InvalidInputError, StorageError } from "../../errors.js";
import { deadLocalPid } from "../../local-process.js";
import { openSqliteStore } from "../sqlite/sqlite-store.js";
import { copyPlans } from "./import-plans.js";
import { openPostgresStore } from "./postgres-store.js";
import { pgText, type Tables, tables } from "./sql.js";

export interface CopyReport {
  runs: number;
  entries: number;
  messages: number;
  requests: number;
  rejections: number;
  workflows: number;
  /** Schedules (setup({ schedules })): next firing, paused, last run (its id mapped). */
  schedules: number;
  /** Audit rows (every write recorded): new ids in the old order, run ids mapped, kept for runs pruned before. */
  audit: number;
  /** Bulk plans (replay_runs, cancel_runs) with their runs' ids mapped and their progress. */
  plans: number;
  /** Tags of runs (name and value), with their runs. */
  tags: number;
  /** Rows that referred to a run the source does not hold (left behind). */
  orphans: number;
}

const CHUNK = 500;

type Row = Record<string, any>;
type Exec = (text: string, values: unknown[]) => Promise<Row[]>;

/** Reads a table in id (or key) order, a chunk at a time, without holding it all in memory. */
function* chunks(
  db: Database.Database,
  sql: string,
  key: (row: Row) => unknown[],
  first: unknown[],
): Generator<Row[]> {
  const stmt = db.prepare(sql);
  let after = first;
  for (;;) {
    const rows = stmt.all(...after, CHUNK) as Row[];
    if (rows.length === 0) return;
    yield rows;
    after = key(rows[rows.length - 1]!);
  }
}

/** Copies `from` (a SQLite file) into `to` (a PostgreSQL URL); `now` decides which leases are live. */
export async function copySqliteToPostgres(from: string, to: string, now = Date.now()): Promise<CopyReport> {
  if (!fs.existsSync(from)) {
    throw new InvalidInputError(
      `There is no SQLite database at "${from}". Pass the file your application uses.`,
    );
  }
  const source = openSqliteStore(from, { readonly: true });
  try {
    const db = source.db;
    // A lease of a process of this machine that no longer exists (killed) does not hold the file.
    const live = (
      db
        .prepare(
          "SELECT workflow, key, owner, lease_until AS leaseUntil FROM runs WHERE owner IS NOT NULL AND lease_until > ?",
        )
        .all(now) as Array<{ workflow: string; key: string; owner: string; leaseUntil: number }>
    ).find((r) => deadLocalPid(r.owner) === null);
    if (live) {
      throw new StorageError(
        "STORAGE_IN_USE",
        `"${from}" is in use: run "${live.workflow}/${live.key}" is leased by ${live.owner} until ${new Date(live.leaseUntil).toISOString()}. Stop the application first (it hands its runs back when it closes), then migrate; nothing was copied.`,
        { path: from, owner: live.owner },
      );
    }
    const target = await openPostgresStore(to, { listen: false });
    const client = await target.pool.connect();
    let broken = false;
    const onError = () => {
      broken = true;
    };
    client.on("error", onError);
    try {
      await client.query("BEGIN");
      const exec: Exec = async (text, values) => (await client.query(text, values)).rows;
      const t = tables(`"${target.schema}"`);
      const report = await copy(db, exec, t, from, target.location);
      await client.query(`NOTIFY ${target.channel}, 'migrate'; COMMIT`); // running engines look at once
      // Statistics for the freshly loaded tables now, not when autovacuum gets to them: without them the
      // planner takes every tag as rare, and a two-tag filter compares each run of one tag with all rows of
      // the other (about 300 ms over 100,000 runs instead of 9 ms).
      await client.query(`ANALYZE ${t.runs}, ${t.runTags}, ${t.entries}, ${t.messages}`);
      return report;
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw err;
    } finally {
      client.removeListener("error", onError);
      client.release(broken);
      await target.close();
    }
  } finally {
    await source.close();
  }
}

async function copy(
  db: Database.Database,
  exec: Exec,
  t: Tables,
  from: string,
  to: string,
): Promise<CopyReport> {
  const report: CopyReport = {
    runs: 0,
    entries: 0,
    messages: 0,
    requests: 0,
    rejections: 0,
    workflows: 0,
    schedules: 0,
    audit: 0,
    plans: 0,
    tags: 0,
    orphans: 0,
  };

  // Refuse before writing anything if any run would collide.
  const clashes: string[] = [];
  let clashCount = 0;
  for (const rows of chunks(
    db,
    "SELECT id, workflow, key FROM runs WHERE id > ? ORDER BY id LIMIT ?",
    (r) => [r.id],
    [0],
  )) {
    const found = await exec(
      `SELECT workflow, key FROM ${t.runs} WHERE (workflow, key) IN (SELECT * FROM unnest($1::text[], $2::text[]))`,
      [rows.map((r) => r.workflow), rows.map((r) => r.key)],
    );
    clashCount += found.length;
    for (const r of found) if (clashes.length < 5) clashes.push(`${r.workflow}/${r.key}`);
  }
  if (clashCount > 0) {
    throw new StorageError(
      "MIGRATE_TARGET_NOT_EMPTY",
      `${to} already holds ${clashCount} run${clashCount === 1 ? "" : "s"} with the same workflow and key as runs in "${from}" (${clashes.join(", ")}${clashCount > 5 ? ", ..." : ""}). Was it migrated already? Migrate into an empty database or another schema (?schema=name); nothing was copied.`,
      { clashes: clashCount },
    );
  }

  const allocate = async (seq: string, n: number): Promise<number[]> =>
    (await exec(`SELECT nextval(${seq}) AS id FROM generate_series(1, $1) ORDER BY 1`, [n])).map(
      (r) => r.id as number,
    );

  // Runs: new ids in the old order; nobody holds a lease in the new database.
  const runIds = new Map<number, number>();
  for (const rows of chunks(db, "SELECT * FROM runs WHERE id > ? ORDER BY id LIMIT ?", (r) => [r.id], [0])) {
    const ids = await allocate(t.runsSeq, rows.length);
    for (const [i, r] of rows.entries()) runIds.set(r.id, ids[i]!);
    const col = (name: string) => rows.map((r) => r[name]);
    await exec(
      `INSERT INTO ${t.runs} (id, workflow, key, version, status, input, initial_state, state, output, error, waiting,
         wait_queues, wake_at, owner, lease_until, created_at, updated_at, finished_at, failure_signature,
         trace_context, parent_run_id, wait_runs, concurrency_key, concurrency_limit, queued_at)
       SELECT id, workflow, key, version, status, input, initial_state, state, output, error, waiting, wait_queues,
         wake_at, NULL, NULL, created_at, updated_at, finished_at, failure_signature, trace_context, parent_run_id,
         wait_runs, concurrency_key, concurrency_limit, queued_at
       FROM unnest($1::bigint[], $2::text[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[], $8::text[],
         $9::text[], $10::text[], $11::text[], $12::text[], $13::bigint[], $14::bigint[], $15::bigint[], $16::bigint[],
         $17::text[], $18::text[], $19::bigint[], $20::text[], $21::text[], $22::int[], $23::bigint[])
         AS r(id, workflow, key, version, status, input, initial_state, state, output, error, waiting, wait_queues,
           wake_at, created_at, updated_at, finished_at, failure_signature, trace_context, parent_run_id, wait_runs,
           concurrency_key, concurrency_limit, queued_at)`,
      [
        ids,
        col("workflow"),
        col("key"),
        col("version"),
        col("status"),
        col("input"),
        col("initial_state"),
        col("state"),
        col("output"),
        col("error"),
        col("waiting"),
        col("wait_queues"),
        col("wake_at"),
        col("created_at"),
        col("updated_at"),
        col("finished_at"),
        col("failure_signature"),
        col("trace_context"),
        // A child's parent and the children a run waits on, by their ids here.
        rows.map((r) => (r.parent_run_id == null ? null : (runIds.get(r.parent_run_id as number) ?? null))),
        rows.map((r) =>
          typeof r.wait_runs === "string"
            ? `|${r.wait_runs
                .split("|")
                .filter(Boolean)
                .map((id) => runIds.get(Number(id)) ?? id)
                .join("|")}|`
            : null,
        ),
        // Concurrency limits: the key and limit recorded at creation, and a run queued for a slot stays queued.
        col("concurrency_key"),
        col("concurrency_limit"),
        col("queued_at"),
      ],
    );
    report.runs += rows.length;
  }

  const entrySql = "SELECT * FROM entries WHERE (run_id, seq) > (?, ?) ORDER BY run_id, seq LIMIT ?";
  for (const all of chunks(db, entrySql, (r) => [r.run_id, r.seq], [0, 0])) {
    const rows = all.filter((r) => runIds.has(r.run_id));
    report.orphans += all.length - rows.length;
    if (rows.length === 0) continue;
    const col = (name: string) => rows.map((r) => r[name]);
    await exec(
      `INSERT INTO ${t.entries} (run_id, seq, scope, ordinal, name, kind, status, started_at, ended_at, input, output,
         error, attempts, detail, state_seq, state_diff)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::int[], $5::text[], $6::text[], $7::text[],
         $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::bigint[],
         $16::text[])`,
      [
        rows.map((r) => runIds.get(r.run_id)),
        ...[
          "seq",
          "scope",
          "ordinal",
          "name",
          "kind",
          "status",
          "started_at",
          "ended_at",
          "input",
          "output",
        ].map(col),
        ...["error", "attempts", "detail", "state_seq", "state_diff"].map(col),
      ],
    );
    report.entries += rows.length;
  }

  const tagSql = "SELECT * FROM run_tags WHERE (run_id, name) > (?, ?) ORDER BY run_id, name LIMIT ?";
  for (const all of chunks(db, tagSql, (r) => [r.run_id, r.name], [0, ""])) {
    const rows = all.filter((r) => runIds.has(r.run_id));
    report.orphans += all.length - rows.length;
    if (rows.length === 0) continue;
    await exec(
      `INSERT INTO ${t.runTags} (run_id, name, value, run_created_at)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[])`,
      [
        rows.map((r) => runIds.get(r.run_id)),
        rows.map((r) => pgText(r.name)),
        rows.map((r) => pgText(r.value)),
        rows.map((r) => r.run_created_at),
      ],
    );
    report.tags += rows.length;
  }

  // Messages, requests and rejections: new ids in the old order, run ids mapped.
  const byId = async (
    table: string,
    seq: string,
    insert: (ids: number[], rows: Row[]) => Promise<void>,
  ): Promise<number> => {
    let copied = 0;
    for (const all of chunks(
      db,
      `SELECT * FROM ${table} WHERE id > ? ORDER BY id LIMIT ?`,
      (r) => [r.id],
      [0],
    )) {
      const rows = all.filter((r) => runIds.has(r.run_id));
      report.orphans += all.length - rows.length;
      if (rows.length === 0) continue;
      await insert(await allocate(seq, rows.length), rows);
      copied += rows.length;
    }
    return copied;
  };
  const run = (rows: Row[]) => rows.map((r) => runIds.get(r.run_id));
  report.messages = await byId("messages", t.messagesSeq, (ids, rows) =>
    exec(
      `INSERT INTO ${t.messages} (id, run_id, queue, body, sent_at, idempotency_key, consumed_at, consumed_by)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::text[], $7::bigint[],
         $8::bigint[])`,
      [
        ids,
        run(rows),
        rows.map((r) => r.queue),
        rows.map((r) => r.body),
        rows.map((r) => r.sent_at),
        rows.map((r) => pgText(r.idempotency_key)),
        rows.map((r) => r.consumed_at),
        rows.map((r) => r.consumed_by),
      ],
    ).then(async () => {
      // The queue waits that consumed these messages name them in their detail: give them the new ids.
      const read = rows.map((r, i) => [r, ids[i]] as const).filter(([r]) => r.consumed_by !== null);
      if (read.length === 0) return;
      await exec(
        // In the JSON text as written (a jsonb round trip would reorder its keys).
        `UPDATE ${t.entries} e SET detail = regexp_replace(e.detail, '"messageId":\\d+', '"messageId":' || m.id)
         FROM unnest($1::bigint[], $2::bigint[], $3::bigint[]) AS m(run_id, seq, id)
         WHERE e.run_id = m.run_id AND e.seq = m.seq AND e.detail LIKE '%"messageId":%'`,
        [read.map(([r]) => runIds.get(r.run_id)), read.map(([r]) => r.consumed_by), read.map(([, id]) => id)],
      );
    }),
  );
  report.requests = await byId("requests", t.requestsSeq, (ids, rows) =>
    exec(
      `INSERT INTO ${t.requests} (id, run_id, kind, args, created_at, done_at, result)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::text[])`,
      [
        ids,
        run(rows),
        rows.map((r) => pgText(r.kind)),
        rows.map((r) => r.args),
        rows.map((r) => r.created_at),
        rows.map((r) => r.done_at),
        rows.map((r) => r.result),
      ],
    ).then(() => undefined),
  );
  report.rejections = await byId("rejections", t.rejectionsSeq, (ids, rows) =>
    exec(
      `INSERT INTO ${t.rejections} (id, run_id, queue, body, error, at)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::bigint[])`,
      [
        ids,
        run(rows),
        rows.map((r) => pgText(r.queue)),
        rows.map((r) => pgText(r.body)),
        rows.map((r) => pgText(r.error)),
        rows.map((r) => r.at),
      ],
    ).then(() => undefined),
  );

  // Published definitions: the target keeps its own where it has one.
  const workflows = db.prepare("SELECT * FROM workflows ORDER BY name, version").all() as Row[];
  if (workflows.length) {
    const added = await exec(
      `INSERT INTO ${t.workflows} (name, version, description, queues, actions, registered_at)
       SELECT * FROM unnest($1::text[], $2::int[], $3::text[], $4::text[], $5::text[], $6::bigint[])
       ON CONFLICT (name, version) DO NOTHING RETURNING name`,
      ["name", "version", "description", "queues", "actions", "registered_at"].map((c) =>
        workflows.map((w) => w[c]),
      ),
    );
    report.workflows = added.length;
  }
  // Schedules: the target keeps its own where it has one of the name.
  const schedules = db.prepare("SELECT * FROM schedules ORDER BY name").all() as Row[];
  if (schedules.length) {
    const added = await exec(
      `INSERT INTO ${t.schedules} (name, workflow, spec, next_due, paused, orphaned, last_due, last_outcome,
         last_run_id, updated_at)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::boolean[], $6::boolean[],
         $7::bigint[], $8::text[], $9::bigint[], $10::bigint[])
       ON CONFLICT (name) DO NOTHING RETURNING name`,
      [
        schedules.map((r) => r.name),
        schedules.map((r) => r.workflow),
        schedules.map((r) => r.spec),
        schedules.map((r) => r.next_due),
        schedules.map((r) => r.paused === 1),
        schedules.map((r) => r.orphaned === 1),
        schedules.map((r) => r.last_due),
        schedules.map((r) => r.last_outcome),
        schedules.map((r) => (r.last_run_id === null ? null : (runIds.get(r.last_run_id) ?? null))),
        schedules.map((r) => r.updated_at),
      ],
    );
    report.schedules = added.length;
  }
  report.audit = await copyAudit(db, exec, t, allocate, runIds);
  report.plans = await copyPlans(db, exec, t, runIds);
  return report;
}

/** The audit rows (append-only: INSERT is all the target allows), new ids in the old order, run ids mapped. */
async function copyAudit(
  db: Database.Database,
  exec: Exec,
  t: Tables,
  allocate: (seq: string, n: number) => Promise<number[]>,
  runIds: Map<number, number>,
): Promise<number> {
  let copied = 0;
  for (const rows of chunks(db, "SELECT * FROM audit WHERE id > ? ORDER BY id LIMIT ?", (r) => [r.id], [0])) {
    const ids = await allocate(t.auditSeq, rows.length);
    const col = (name: string) => rows.map((r) => r[name]);
    await exec(
      `INSERT INTO ${t.audit} (id, at, surface, client, action, workflow, run_key, run_id, args, args_cut, ok,
         error_code, error_message)
       SELECT * FROM unnest($1::bigint[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[],
         $8::bigint[], $9::text[], $10::boolean[], $11::boolean[], $12::text[], $13::text[])`,
      [
        ids,
        ...["at", "surface", "client", "action"].map(col),
        rows.map((r) => pgText(r.workflow)),
        rows.map((r) => pgText(r.run_key)),
        // A run pruned before the copy is not in the target: the row keeps its workflow and key.
        rows.map((r) => (r.run_id == null ? null : (runIds.get(r.run_id as number) ?? null))),
        rows.map((r) => pgText(r.args)),
        rows.map((r) => r.args_cut === 1),
        rows.map((r) => r.ok === 1),
        rows.map((r) => pgText(r.error_code)),
        rows.map((r) => pgText(r.error_message)),
      ],
    );
    copied += rows.length;
  }
  return copied;
}
