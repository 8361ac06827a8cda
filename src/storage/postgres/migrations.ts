import type pg from "pg";
import { storedSignature } from "../../failure-signature.js";
import type { EntryRow } from "../store.js";
import { ENTRY_COLUMNS } from "./sql.js";

// Ordered schema migrations for PostgreSQL; the table `waymark_schema` records how many have been applied.
// Append only: never edit a migration that has shipped. Each takes the quoted schema name.
//
// Columns mirror the SQLite schema: JSON as TEXT (the store never parses it), times as BIGINT milliseconds
// from the engine's clock (no SQL defaults, no now()).

/** A day of failures in failure_counts: coalesce(finished_at, updated_at) / DAY_MS. */
export const FAILURE_DAY_MS = 86_400_000;

const failing = (r: string) => `${r}.failure_signature IS NOT NULL AND ${r}.status IN ('failed', 'retrying')`;
const failureDay = (r: string) => `coalesce(${r}.finished_at, ${r}.updated_at) / ${FAILURE_DAY_MS}`;

function failureCountsPostgres(s: string): string {
  const bucket = `day = ${failureDay("OLD")} AND signature = OLD.failure_signature AND workflow = OLD.workflow`;
  return `
  CREATE TABLE ${s}.failure_counts (
    day BIGINT NOT NULL,
    signature TEXT NOT NULL,
    workflow TEXT NOT NULL,
    runs INTEGER NOT NULL,
    retrying INTEGER NOT NULL,
    PRIMARY KEY (day, signature, workflow)
  );
  CREATE INDEX runs_failure_at ON ${s}.runs (failure_signature, workflow, (coalesce(finished_at, updated_at)), status)
    WHERE failure_signature IS NOT NULL AND status IN ('failed', 'retrying');
  CREATE INDEX runs_failure_created ON ${s}.runs (failure_signature, workflow, created_at, id)
    WHERE failure_signature IS NOT NULL AND status IN ('failed', 'retrying');
  CREATE FUNCTION ${s}.failure_counts_track() RETURNS trigger LANGUAGE plpgsql AS $fc$
  BEGIN
    IF TG_OP <> 'INSERT' THEN
      IF ${failing("OLD")} THEN
        UPDATE ${s}.failure_counts SET runs = runs - 1, retrying = retrying - (OLD.status = 'retrying')::int
          WHERE ${bucket};
        DELETE FROM ${s}.failure_counts WHERE ${bucket} AND runs <= 0;
      END IF;
    END IF;
    IF TG_OP <> 'DELETE' THEN
      IF ${failing("NEW")} THEN
        INSERT INTO ${s}.failure_counts AS c (day, signature, workflow, runs, retrying)
          VALUES (${failureDay("NEW")}, NEW.failure_signature, NEW.workflow, 1, (NEW.status = 'retrying')::int)
          ON CONFLICT (day, signature, workflow)
          DO UPDATE SET runs = c.runs + 1, retrying = c.retrying + excluded.retrying;
      END IF;
    END IF;
    RETURN NULL;
  END
  $fc$;
  CREATE TRIGGER failure_counts_insert AFTER INSERT ON ${s}.runs
    FOR EACH ROW WHEN (${failing("NEW")}) EXECUTE FUNCTION ${s}.failure_counts_track();
  CREATE TRIGGER failure_counts_update AFTER UPDATE ON ${s}.runs
    FOR EACH ROW WHEN ((${failing("OLD")} OR ${failing("NEW")}) AND NOT (
      OLD.failure_signature IS NOT DISTINCT FROM NEW.failure_signature AND OLD.workflow = NEW.workflow
      AND OLD.status = NEW.status AND ${failureDay("OLD")} = ${failureDay("NEW")}))
    EXECUTE FUNCTION ${s}.failure_counts_track();
  CREATE TRIGGER failure_counts_delete AFTER DELETE ON ${s}.runs
    FOR EACH ROW WHEN (${failing("OLD")}) EXECUTE FUNCTION ${s}.failure_counts_track();
  INSERT INTO ${s}.failure_counts (day, signature, workflow, runs, retrying)
    SELECT ${failureDay("r")}, r.failure_signature, r.workflow, count(*), count(*) FILTER (WHERE r.status = 'retrying')
    FROM ${s}.runs r WHERE ${failing("r")} GROUP BY 1, 2, 3;
  `;
}

export const MIGRATIONS: ReadonlyArray<(s: string) => string> = [
  (s) => `
  CREATE TABLE ${s}.runs (
    id BIGSERIAL PRIMARY KEY,
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
    wake_at BIGINT,
    owner TEXT,
    lease_until BIGINT,
    created_at BIGINT NOT NULL,
    updated_at BIGINT NOT NULL,
    finished_at BIGINT,
    UNIQUE (workflow, key)
  ) WITH (fillfactor = 70);
  CREATE INDEX runs_wake ON ${s}.runs (wake_at) WHERE wake_at IS NOT NULL;
  CREATE INDEX runs_owner ON ${s}.runs (owner) WHERE owner IS NOT NULL;
  CREATE INDEX runs_created ON ${s}.runs (created_at, id);
  CREATE INDEX runs_workflow_created ON ${s}.runs (workflow, created_at, id);
  CREATE INDEX runs_status_created ON ${s}.runs (status, created_at, id);

  CREATE TABLE ${s}.entries (
    run_id BIGINT NOT NULL,
    seq BIGINT NOT NULL,
    scope TEXT NOT NULL,
    ordinal INTEGER NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    started_at BIGINT,
    ended_at BIGINT,
    input TEXT,
    output TEXT,
    error TEXT,
    attempts TEXT,
    detail TEXT,
    state_seq BIGINT,
    state_diff TEXT,
    PRIMARY KEY (run_id, seq)
  ) WITH (fillfactor = 80);

  CREATE TABLE ${s}.messages (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL,
    queue TEXT NOT NULL,
    body TEXT NOT NULL,
    sent_at BIGINT NOT NULL,
    idempotency_key TEXT,
    consumed_at BIGINT,
    consumed_by BIGINT
  );
  CREATE UNIQUE INDEX messages_idempotency ON ${s}.messages (run_id, idempotency_key)
    WHERE idempotency_key IS NOT NULL;
  CREATE INDEX messages_pending ON ${s}.messages (run_id, id) WHERE consumed_at IS NULL;
  CREATE INDEX messages_run ON ${s}.messages (run_id, id);

  CREATE TABLE ${s}.requests (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL,
    kind TEXT NOT NULL,
    args TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    done_at BIGINT,
    result TEXT
  );
  CREATE INDEX requests_pending ON ${s}.requests (run_id, id) WHERE done_at IS NULL;

  CREATE TABLE ${s}.rejections (
    id BIGSERIAL PRIMARY KEY,
    run_id BIGINT NOT NULL,
    queue TEXT NOT NULL,
    body TEXT NOT NULL,
    error TEXT NOT NULL,
    at BIGINT NOT NULL
  );
  CREATE INDEX rejections_run ON ${s}.rejections (run_id, id);

  CREATE TABLE ${s}.workflows (
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    description TEXT,
    queues TEXT NOT NULL,
    actions TEXT NOT NULL,
    registered_at BIGINT NOT NULL,
    PRIMARY KEY (name, version)
  );
  `,
  // 2: each failed or retrying run's failure signature, stored when it fails (backfilled below).
  (s) => `
  ALTER TABLE ${s}.runs ADD COLUMN failure_signature TEXT;
  CREATE INDEX runs_failure ON ${s}.runs (failure_signature, workflow) WHERE failure_signature IS NOT NULL;
  `,
  // 3: the run's trace context (a W3C traceparent), so a run resumed in another process continues its trace.
  (s) => `
  ALTER TABLE ${s}.runs ADD COLUMN trace_context TEXT;
  `,
  // 4: child runs: the run that started a run (ctx.child), and the child runs a suspended run waits on.
  (s) => `
  ALTER TABLE ${s}.runs ADD COLUMN parent_run_id BIGINT;
  ALTER TABLE ${s}.runs ADD COLUMN wait_runs TEXT;
  CREATE INDEX runs_parent ON ${s}.runs (parent_run_id) WHERE parent_run_id IS NOT NULL;
  `,
  // 5: schedules (setup({ schedules })): the next firing of each, paused or not, and its latest firing.
  (s) => `
  CREATE TABLE ${s}.schedules (
    name TEXT PRIMARY KEY,
    workflow TEXT NOT NULL,
    spec TEXT NOT NULL,
    next_due BIGINT,
    paused BOOLEAN NOT NULL DEFAULT false,
    orphaned BOOLEAN NOT NULL DEFAULT false,
    last_due BIGINT,
    last_outcome TEXT,
    last_run_id BIGINT,
    updated_at BIGINT NOT NULL
  );
  `,
  // 6: the latest completed run of a workflow version (compare_runs' default other run, diagnose_run's sibling).
  (s) => `
  CREATE INDEX runs_completed ON ${s}.runs (workflow, version, finished_at, id) WHERE status = 'completed';
  `,
  // 7: concurrency limits (workflow({ concurrency })): the run's key value and limit, and since when it is
  // queued for a slot; indexed for counting a key's slot holders and finding its oldest queued runs.
  (s) => `
  ALTER TABLE ${s}.runs ADD COLUMN concurrency_key TEXT;
  ALTER TABLE ${s}.runs ADD COLUMN concurrency_limit INTEGER;
  ALTER TABLE ${s}.runs ADD COLUMN queued_at BIGINT;
  CREATE INDEX runs_slots ON ${s}.runs (workflow, concurrency_key, status) WHERE concurrency_key IS NOT NULL;
  CREATE INDEX runs_slot_queue ON ${s}.runs (workflow, concurrency_key, id) WHERE queued_at IS NOT NULL;
  `,
  // 8: the audit of every write (MCP, inspector, CLI): append-only, the trigger refuses UPDATE, DELETE, TRUNCATE.
  (s) => `
  CREATE TABLE ${s}.audit (
    id BIGSERIAL PRIMARY KEY,
    at BIGINT NOT NULL,
    surface TEXT NOT NULL,
    client TEXT NOT NULL,
    action TEXT NOT NULL,
    workflow TEXT,
    run_key TEXT,
    run_id BIGINT,
    args TEXT NOT NULL,
    args_cut BOOLEAN NOT NULL,
    ok BOOLEAN NOT NULL,
    error_code TEXT,
    error_message TEXT
  );
  CREATE INDEX audit_run ON ${s}.audit (run_id, id) WHERE run_id IS NOT NULL;
  CREATE INDEX audit_target ON ${s}.audit (workflow, run_key, id);
  CREATE INDEX audit_at ON ${s}.audit (at, id);
  CREATE FUNCTION ${s}.audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN RAISE EXCEPTION 'the audit is append-only: its rows cannot be changed or deleted'; END $$;
  CREATE TRIGGER audit_no_change BEFORE UPDATE OR DELETE ON ${s}.audit
    FOR EACH ROW EXECUTE FUNCTION ${s}.audit_append_only();
  CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON ${s}.audit
    FOR EACH STATEMENT EXECUTE FUNCTION ${s}.audit_append_only();
  `,
  // 9: retention: finding expired runs is a range read per workflow and status, and deleting one's requests
  // reads an index (requests had only a partial index on the pending ones).
  (s) => `
  CREATE INDEX runs_finished ON ${s}.runs (workflow, status, finished_at) WHERE finished_at IS NOT NULL;
  CREATE INDEX requests_run ON ${s}.requests (run_id, id);
  `,
  // 10: bulk plans (replay_runs, cancel_runs): the runs a dry run pinned, and what became of each.
  (s) => `
  CREATE TABLE ${s}.bulk_plans (
    token TEXT PRIMARY KEY,
    action TEXT NOT NULL,
    spec TEXT NOT NULL,
    created_at BIGINT NOT NULL,
    expires_at BIGINT NOT NULL,
    total INTEGER NOT NULL
  );
  CREATE TABLE ${s}.bulk_plan_runs (
    token TEXT NOT NULL,
    position INTEGER NOT NULL,
    run_id BIGINT NOT NULL,
    outcome TEXT,
    reason TEXT,
    done_at BIGINT,
    PRIMARY KEY (token, position)
  );
  `,
  // 11: tags to find runs by (getOrCreate's tags, step.tag): one row per run and name. The run's created_at is
  // copied in so a tag filter reads its page newest first straight from the (name, value, ...) index.
  (s) => `
  CREATE TABLE ${s}.run_tags (
    run_id BIGINT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    run_created_at BIGINT NOT NULL,
    PRIMARY KEY (run_id, name)
  );
  CREATE INDEX run_tags_find ON ${s}.run_tags (name, value, run_created_at, run_id);
  `,
  // 12: failure counts (list_failures at any scale): failing runs counted by day of failure, signature and
  // workflow, kept by a trigger in the transaction of every write that makes a run fail or stop failing; one
  // index finds a group's first and last failure and counts the part of a day a window starts in, the other
  // reads a group's newest runs (list_failures' keys, replay_runs by signature) without scanning its workflow.
  (s) => failureCountsPostgres(s),
  // 13: run counts by workflow, version and status (the inspector's runs list, list_workflows, metrics, the
  // pruner) read from an index that covers them, as on SQLite.
  (s) => `
  CREATE INDEX runs_counts ON ${s}.runs (workflow, version, status);
  `,
  // 14: a search in error text walks only the runs that have an error, newest first, as on SQLite.
  (s) => `
  CREATE INDEX runs_error_created ON ${s}.runs (created_at, id) WHERE error IS NOT NULL;
  `,
  // 15: error text looked up by its trigrams (list_runs errorContains through ILIKE): a pg_trgm GIN index of the
  // runs that have an error, made by createErrorIndex below (the extension may not be had: then the search
  // stays a walk of runs_error_created and the store says so when it opens).
  () => "SELECT 1",
  // 16: the search in error text reads the error's message, what a person reads, not its JSON (where a quote,
  // a backslash or a newline is escaped, and keys, name and stack match any search): error_text(error) is the
  // message, or the whole text when it is not JSON or holds no message (never an error: a row whose error is
  // not JSON is still written). The trigram index is made again on it by createErrorIndex.
  (s) => `
  CREATE FUNCTION ${s}.${ERROR_TEXT_FUNCTION}(error text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
    BEGIN
      RETURN coalesce(error::json ->> 'message', error);
    EXCEPTION WHEN others THEN
      RETURN error;
    END $$;
  DROP INDEX IF EXISTS ${s}.${ERROR_INDEX};
  `,
  // 17: a search of 1 or 2 characters (no trigram pg_trgm can use: every run with an error was read, 150-190 ms
  // on a million runs): error_grams(text) is every string of 1 or 2 characters lower(text) holds, and a GIN
  // index of the messages' grams finds the runs whose message holds one (built in: no extension needed). The
  // characters are split once and paired with the next: substr() at each place counts characters from the
  // start in UTF-8, so a message of 6,000 characters took 3.3 s to record that way, one of 200,000 minutes.
  // error_text is PARALLEL UNSAFE: its EXCEPTION block starts a subtransaction, which no process may while a
  // parallel plan runs (one under a Gather failed: "cannot start subtransactions during a parallel operation"),
  // and starting workers to fetch a few candidates took 10-15 ms.
  (s) => `
  ALTER FUNCTION ${s}.${ERROR_TEXT_FUNCTION}(text) PARALLEL UNSAFE;
  CREATE FUNCTION ${s}.${ERROR_GRAMS_FUNCTION}(message text) RETURNS text[]
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
    SELECT coalesce(array_agg(DISTINCT g), '{}') FROM (
      SELECT c, lead(c) OVER (ORDER BY i) AS next
        FROM unnest(string_to_array(lower(message), NULL)) WITH ORDINALITY AS chars(c, i)) pairs,
      LATERAL (VALUES (c), (c || next)) AS grams(g)
      WHERE g IS NOT NULL
    $$;
  CREATE INDEX ${ERROR_GRAMS_INDEX} ON ${s}.runs USING gin (${s}.${ERROR_GRAMS_FUNCTION}(${s}.${ERROR_TEXT_FUNCTION}(error)))
    WHERE error IS NOT NULL;
  `,
];

/** The trigram index of error text (migration 15, its message since 16) and its extension; null when made, else why not. */
export async function createErrorIndex(client: pg.PoolClient, s: string): Promise<string | null> {
  await client.query("SAVEPOINT waymark_error_index");
  try {
    await client.query("CREATE EXTENSION IF NOT EXISTS pg_trgm");
    const { rows } = await client.query<{ nspname: string }>(
      `SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
        WHERE e.extname = 'pg_trgm'`,
    );
    const opclass = `"${rows[0]!.nspname.replaceAll('"', '""')}".gin_trgm_ops`;
    await client.query(
      `CREATE INDEX IF NOT EXISTS ${ERROR_INDEX} ON ${s}.runs USING gin (${s}.${ERROR_TEXT_FUNCTION}(error) ${opclass})
        WHERE error IS NOT NULL`,
    );
    await client.query("RELEASE SAVEPOINT waymark_error_index");
    return null;
  } catch (err) {
    await client.query("ROLLBACK TO SAVEPOINT waymark_error_index");
    return (err as Error).message;
  }
}

/** The name of the trigram index of error text (migration 15, on its message since 16). */
export const ERROR_INDEX = "runs_error_trgm";

/** The function of a schema that gives the text of an error a search reads (migration 16). */
export const ERROR_TEXT_FUNCTION = "waymark_error_text";

/** The function of a schema that gives the strings of 1 and 2 characters of a message, lowered (migration 17). */
export const ERROR_GRAMS_FUNCTION = "waymark_error_grams";

/** The GIN index of the messages' strings of 1 and 2 characters (migration 17). */
export const ERROR_GRAMS_INDEX = "runs_error_grams";

/** Data a migration computes in code, run right after its SQL in the same transaction (by migration index). */
export const BACKFILLS: Record<number, (client: pg.PoolClient, s: string) => Promise<void>> = {
  // Without the extension the migration still applies; migrate() then says why and tries again at each start.
  // (Migration 15's index is made by 16's since: on the message, through 16's function.)
  15: async (client, s) => {
    await createErrorIndex(client, s);
  },
  1: async (client, s) => {
    for (let after = 0; ; ) {
      const page = (
        await client.query<{
          id: number;
          workflow: string;
          status: string;
          error: string | null;
          waiting: string | null;
        }>(
          `SELECT id, workflow, status, error, waiting FROM ${s}.runs WHERE status IN ('failed', 'retrying')
            AND id > $1 ORDER BY id LIMIT 500`,
          [after],
        )
      ).rows;
      const ids: number[] = [];
      const signatures: string[] = [];
      for (const run of page) {
        const entries = (
          await client.query<EntryRow>(
            `SELECT ${ENTRY_COLUMNS} FROM ${s}.entries WHERE run_id = $1 ORDER BY seq`,
            [run.id],
          )
        ).rows;
        const signature = storedSignature(run, () => entries);
        if (signature) {
          ids.push(run.id);
          signatures.push(signature);
        }
      }
      if (ids.length) {
        await client.query(
          `UPDATE ${s}.runs r SET failure_signature = v.sig FROM unnest($1::bigint[], $2::text[]) AS v(id, sig)
            WHERE r.id = v.id`,
          [ids, signatures],
        );
      }
      if (page.length < 500) break;
      after = page.at(-1)!.id;
    }
  },
};

/** The line said when a schema has no trigram index of error text (`why`: the error met making it, if known). */
export function errorIndexMissing(s: string, why: string | null): string {
  return `schema ${s} has no trigram index of error text${why ? ` (pg_trgm: ${why})` : ""}: list_runs errorContains reads every failed run. A role that may create extensions can run CREATE EXTENSION pg_trgm; the next start makes the index.`;
}

/** The schema version this build writes; a database above it was written by a newer Waymark. */
export const SCHEMA_VERSION = MIGRATIONS.length;

/** The table holding the schema version (one row). Its presence marks a schema as Waymark's. */
export const VERSION_TABLE = "waymark_schema";
