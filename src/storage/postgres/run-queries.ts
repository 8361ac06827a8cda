// The SQL of the run listings whose WHERE clause depends on the filters: a page of runs, failure groups.

import type pg from "pg";
import { isShortNeedle } from "../sqlite/fold-case.js";
import type { FailureGroupQuery, RunQuery, RunRow } from "../store.js";
import { ERROR_GRAMS_FUNCTION, ERROR_TEXT_FUNCTION, FAILURE_DAY_MS } from "./migrations.js";
import { pgText, runColumns, type Tables } from "./sql.js";

/**
 * A page of runs newest first (keyset on created_at, id), filtered as `q` asks; $n parameters in `args`.
 * With tags, the page is read from the first tag's rows in the run_tags_find index, newest first, each
 * other tag checked by its primary key: the cost follows the page, not the number of runs.
 */
export function runsQuery(
  t: Tables,
  q: RunQuery,
  errors: ErrorPlan = "scan",
): { text: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  const arg = (v: unknown) => {
    args.push(v);
    return `$${args.length}`;
  };
  const tags = Object.entries(q.tags ?? {});
  if (tags.length > 0) {
    const [[name, value], ...rest] = tags as [[string, string], ...Array<[string, string]>];
    where.push(`t.name = ${arg(pgText(name))}`, `t.value = ${arg(pgText(value))}`);
    // Each other tag's value is read by its primary key (run_id, name) per row, a scalar subquery: as EXISTS,
    // the planner may join it instead, and on a schema not yet analyzed (right after a batch load) it read
    // the other tag's every run for each row of the first (170 ms for two tags over 100,000 runs, not 0.7).
    for (const [n, v] of rest) {
      where.push(`(SELECT o.value FROM ${t.runTags} o WHERE o.run_id = t.run_id AND o.name = ${arg(pgText(n))})
        = ${arg(pgText(v))}`);
    }
    runFilters(t, q, where, arg, "r.", errors);
    if (q.createdAfter !== undefined) where.push(`t.run_created_at >= ${arg(q.createdAfter)}`);
    if (q.createdBefore !== undefined) where.push(`t.run_created_at < ${arg(q.createdBefore)}`);
    if (q.before)
      where.push(`(t.run_created_at, t.run_id) < (${arg(q.before.createdAt)}, ${arg(q.before.id)})`);
    const text = `SELECT ${runColumns("r.")} FROM ${t.runTags} t JOIN ${t.runs} r ON r.id = t.run_id
      WHERE ${where.join(" AND ")} ORDER BY t.run_created_at DESC, t.run_id DESC LIMIT ${arg(q.limit)}`;
    return { text, args };
  }
  runFilters(t, q, where, arg, "", errors);
  if (errors === "newest") {
    // The window: the newestErrors(limit) newest runs with an error in the time range before the cursor, a
    // range of runs_error_created walked backward; the filters are checked on its rows. Its last row comes
    // too (edge), whether it matches or not: the walk goes on from it, and it is read in the same snapshot.
    const { range } = errorRange(q, args);
    const size = arg(newestErrors(q.limit));
    const text = `SELECT ${runColumns()}, ${where.join(" AND ")} AS matched, rn = ${size} AS edge
      FROM (SELECT *, row_number() OVER (ORDER BY created_at DESC, id DESC) AS rn FROM ${t.runs}
        WHERE ${range.join(" AND ")} ORDER BY created_at DESC, id DESC LIMIT ${size}) w
      WHERE (${where.join(" AND ")}) OR rn = ${size} ORDER BY created_at DESC, id DESC LIMIT ${arg(q.limit + 1)}`;
    return { text, args };
  }
  if (q.before) where.push(`(created_at, id) < (${arg(q.before.createdAt)}, ${arg(q.before.id)})`);
  const text = `SELECT ${runColumns()} FROM ${t.runs} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, id DESC LIMIT ${arg(q.limit)}`;
  return { text, args };
}

/** Three letters or digits in a row: a string pg_trgm extracts a trigram from (it splits words on the rest). */
const TRIGRAM = /[\p{L}\p{N}]{3}/u;

/**
 * How a page with a search in error text reads. "scan": runs_error_created newest first, each error read and
 * searched (no index, a string without a trigram, a tag filter, or many candidates: they are dense enough
 * that the walk soon fills the page, where a sort of them all would not). "few": the candidates from the
 * trigram index (migration 15), fetched and sorted. "newest": the scan bounded to the newestErrors(limit) newest
 * runs with an error (before the cursor); only a page it fills is the answer (every run newer was searched).
 * The planner cannot tell "few" and "scan" apart (it guesses a handful of rows for any ILIKE), so the store
 * reads "newest" first (a common string fills its page there: counting its candidates in the GIN index alone
 * took longer than that), and only when the page is not full counts the candidates (errorProbe) and chooses.
 */
export type ErrorPlan = "scan" | "few" | "newest";

/**
 * How many of the newest runs with an error "newest" searches for a page of `limit`: ten pages' worth (a
 * string one error in ten holds fills it), from 100 to 500. Each costs its error's lower() (7.5 us for 1.4 KB),
 * which a string no error holds pays for all of them before its candidates are counted.
 */
export function newestErrors(limit: number): number {
  return Math.min(500, Math.max(100, limit * 10));
}

/** Fewer candidates than this are fetched and sorted ("few"). */
export const ERROR_FEW = 100;

/** `needle` as an ILIKE pattern: anywhere, with %, _ and \ taken literally. ILIKE lowers both sides as lower(). */
export function errorPattern(needle: string): string {
  return `%${needle.replace(/[\\%_]/g, "\\$&")}%`;
}

/**
 * The count of `q`'s candidates, up to ERROR_FEW, through the trigram index (`trigrams`: it exists) or for 1 or
 * 2 characters the index of the messages' grams (migration 17); null when neither can help. The count it reads
 * (n) is null when lower() makes the string longer than 2 characters (an ICU collation may): then it walks on.
 */
export function errorProbe(
  t: Tables,
  q: RunQuery,
  trigrams = true,
): { text: string; args: unknown[] } | null {
  if (!q.errorContains || Object.keys(q.tags ?? {}).length > 0) return null;
  if (isShortNeedle(q.errorContains)) {
    return {
      text: `SELECT CASE WHEN length(lower($1::text)) <= 2 THEN (SELECT count(*)::int FROM (SELECT 1 FROM ${t.runs}
        WHERE error IS NOT NULL AND ${errorGrams(t, "error")} @> ARRAY[lower($1::text)] LIMIT $2) c) END AS n`,
      args: [pgText(q.errorContains), ERROR_FEW],
    };
  }
  if (!trigrams || !TRIGRAM.test(q.errorContains)) return null;
  return {
    text: `SELECT count(*)::int AS n FROM (SELECT 1 FROM ${t.runs} WHERE error IS NOT NULL
      AND ${errorText(t, "error")} ILIKE $1
      LIMIT $2) c`,
    args: [errorPattern(q.errorContains), ERROR_FEW],
  };
}

/**
 * The text of `column` (runs.error) a search reads: the error's message, or the whole text when it is not JSON
 * or holds no message, through the schema's function (migration 16), the expression the trigram index is on.
 */
export function errorText(t: Tables, column: string): string {
  return `${t.runs.slice(0, -".runs".length)}.${ERROR_TEXT_FUNCTION}(${column})`;
}

/** The strings of 1 and 2 characters of `column`'s message, lowered: what the grams index holds (migration 17). */
function errorGrams(t: Tables, column: string): string {
  return `${t.runs.slice(0, -".runs".length)}.${ERROR_GRAMS_FUNCTION}(${errorText(t, column)})`;
}

/** What readRuns queries through: a pool or a client. */
type Queryable = Pick<pg.Pool, "query">;

/**
 * A page of runs as `q` asks, read by the plan that suits it. A search in error text the trigram index can
 * help with reads the newestErrors(limit) newest runs with an error first ("newest"): a page they fill is the answer,
 * and a common string fills it after a few rows. Otherwise, if there are no more runs with an error (in the
 * range, before the cursor), those rows are the answer too. Else the candidates are counted: few are fetched
 * and sorted; many are walked on from the last of the newest, the page's rest after the rows already found.
 */
export async function readRuns(
  db: Queryable,
  t: Tables,
  q: RunQuery,
  errorIndex: boolean,
): Promise<RunRow[]> {
  const read = async (plan: ErrorPlan, query = q) => {
    const { text, args } = runsQuery(t, query, plan);
    return (await db.query<RunRow>(text, args)).rows;
  };
  const probe = errorProbe(t, q, errorIndex);
  if (probe === null) return await read("scan");
  const newest: RunRow[] = [];
  let edge: RunRow | undefined;
  // (A page larger than the window could not be filled by it.)
  if (q.limit <= newestErrors(q.limit)) {
    const { text, args } = runsQuery(t, q, "newest");
    for (const { matched, edge: last, ...run } of (await db.query<NewestRow>(text, args)).rows) {
      if (matched && newest.length < q.limit) newest.push(run);
      if (last) edge = run;
    }
    // A full page, or every run with an error (in the range, before the cursor) searched.
    if (newest.length === q.limit || edge === undefined) return newest;
  }
  const n: number | null = (await db.query(probe.text, probe.args)).rows[0].n;
  if (n !== null && n < ERROR_FEW) return await read("few");
  if (edge === undefined) return await read("scan");
  const before = { createdAt: edge.createdAt, id: edge.id };
  return [...newest, ...(await read("scan", { ...q, before, limit: q.limit - newest.length }))];
}

/** A row of "newest": a run, whether it matches, whether it is the last of the window. */
type NewestRow = RunRow & { matched: boolean; edge: boolean };

/** The runs with an error in `q`'s time range before its cursor: a range of runs_error_created. */
function errorRange(q: RunQuery, args: unknown[] = []): { range: string[]; args: unknown[] } {
  const arg = (v: unknown) => {
    args.push(v);
    return `$${args.length}`;
  };
  const range = ["error IS NOT NULL"];
  if (q.createdAfter !== undefined) range.push(`created_at >= ${arg(q.createdAfter)}`);
  if (q.createdBefore !== undefined) range.push(`created_at < ${arg(q.createdBefore)}`);
  if (q.before) range.push(`(created_at, id) < (${arg(q.before.createdAt)}, ${arg(q.before.id)})`);
  return { range, args };
}

/** The WHERE conditions on runs' own columns (every filter but tags and the cursor); `p` qualifies them. */
function runFilters(
  t: Tables,
  q: RunQuery,
  where: string[],
  arg: (v: unknown) => string,
  p: string,
  errors: ErrorPlan,
): void {
  if (q.workflow !== undefined) where.push(`${p}workflow = ${arg(q.workflow)}`);
  if (q.status && q.status.length > 0) where.push(`${p}status = ANY(${arg(q.status)}::text[])`);
  if (q.key !== undefined) where.push(`${p}key = ${arg(q.key)}`);
  if (q.keyContains) where.push(`strpos(${p}key, ${arg(q.keyContains)}) > 0`);
  if (q.errorContains) {
    const text = errorText(t, `${p}error`);
    if (errors === "few")
      where.push(
        isShortNeedle(q.errorContains)
          ? `${errorGrams(t, `${p}error`)} @> ARRAY[lower(${arg(pgText(q.errorContains))}::text)]`
          : `${text} ILIKE ${arg(errorPattern(q.errorContains))}`,
      );
    where.push(`${p}error IS NOT NULL AND strpos(lower(${text}), lower(${arg(q.errorContains)})) > 0`);
  }
  if (q.createdAfter !== undefined) where.push(`${p}created_at >= ${arg(q.createdAfter)}`);
  if (q.createdBefore !== undefined) where.push(`${p}created_at < ${arg(q.createdBefore)}`);
  if (q.version !== undefined) where.push(`${p}version = ${arg(q.version)}`);
  if (q.failureSignature !== undefined)
    where.push(`${p}failure_signature = ${arg(q.failureSignature)} AND ${p}status IN ('failed', 'retrying')`);
}

/** Failed and retrying runs since `q.since` grouped by signature: the count query, the groups query (limit last). */
export function failureGroupsQuery(
  t: Tables,
  q: FailureGroupQuery,
): { count: string; groups: string; args: unknown[] } {
  const args: unknown[] = [q.since];
  const where = [
    "failure_signature IS NOT NULL",
    "status IN ('failed', 'retrying')",
    "coalesce(finished_at, updated_at) >= $1",
  ];
  if (q.workflow !== undefined) {
    args.push(q.workflow);
    where.push(`workflow = $${args.length}`);
  }
  if (q.signature !== undefined) {
    args.push(q.signature);
    where.push(`failure_signature = $${args.length}`);
  }
  for (const [name, value] of Object.entries(q.tags ?? {})) {
    args.push(pgText(name), pgText(value));
    where.push(`EXISTS (SELECT 1 FROM ${t.runTags} t WHERE t.run_id = ${t.runs}.id
      AND t.name = $${args.length - 1} AND t.value = $${args.length})`);
  }
  const from = `FROM ${t.runs} WHERE ${where.join(" AND ")}`;
  return {
    count: `SELECT count(*)::int AS n ${from}`,
    groups: `SELECT failure_signature AS signature, workflow, count(*)::int AS count,
            (count(*) FILTER (WHERE status = 'retrying'))::int AS retrying,
            min(coalesce(finished_at, updated_at)) AS "firstAt", max(coalesce(finished_at, updated_at)) AS "lastAt"
          ${from} GROUP BY failure_signature, workflow ORDER BY count(*) DESC, max(coalesce(finished_at, updated_at)) DESC
          LIMIT $${args.length + 1}`,
    args,
  };
}

/**
 * The failure groups read from failure_counts (migration 12) instead of the runs: the days after the one `since`
 * falls in are summed from the counts; that day's failures at or after `since`, and each group's first and
 * last failure, are read from the runs_failure_at index (a range and two probes per group). The answer is the
 * grouped query's; null when the counts cannot answer (a tag filter, a window before 1970).
 */
export function failureCountsQuery(t: Tables, q: FailureGroupQuery): { sql: string; args: unknown[] } | null {
  if ((q.tags && Object.keys(q.tags).length > 0) || q.since < 0) return null;
  const d0 = Math.floor(q.since / FAILURE_DAY_MS);
  // $1 since, $2 the day it falls in, $3 the end of that day, $4 limit.
  const args: unknown[] = [q.since, d0, (d0 + 1) * FAILURE_DAY_MS, q.limit];
  const where = ["day >= $2"];
  if (q.workflow !== undefined) {
    args.push(q.workflow);
    where.push(`workflow = $${args.length}`);
  }
  if (q.signature !== undefined) {
    args.push(q.signature);
    where.push(`signature = $${args.length}`);
  }
  // Every read of the runs bounds the failure time (the latest failure too: a group counted has one at or
  // after since), so the planner takes runs_failure_at rather than the group's rows in runs_failure_created.
  const at = "coalesce(r.finished_at, r.updated_at)";
  const group = `FROM ${t.runs} r WHERE r.failure_signature = g.signature AND r.workflow = g.workflow
        AND r.failure_signature IS NOT NULL AND r.status IN ('failed', 'retrying')`;
  const sql = `WITH g AS (
      SELECT signature, workflow, coalesce(sum(runs) FILTER (WHERE day > $2), 0)::int AS later,
        coalesce(sum(retrying) FILTER (WHERE day > $2), 0)::int AS "laterRetrying"
      FROM ${t.failureCounts} WHERE ${where.join(" AND ")} GROUP BY signature, workflow
    ), c AS (
      SELECT g.signature, g.workflow, g.later + d.n AS count, g."laterRetrying" + d.retrying AS retrying,
        f.at AS "firstAt", l.at AS "lastAt"
      FROM g
      CROSS JOIN LATERAL (SELECT count(*)::int AS n, (count(*) FILTER (WHERE r.status = 'retrying'))::int AS retrying
        ${group} AND ${at} >= $1 AND ${at} < $3) d
      CROSS JOIN LATERAL (SELECT ${at} AS at ${group} AND ${at} >= $1 ORDER BY ${at} LIMIT 1) f
      CROSS JOIN LATERAL (SELECT ${at} AS at ${group} AND ${at} >= $1 ORDER BY ${at} DESC LIMIT 1) l
    )
    SELECT signature, workflow, count, retrying, "firstAt", "lastAt", (sum(count) OVER ())::int AS total
    FROM c WHERE count > 0 ORDER BY count DESC, "lastAt" DESC, signature, workflow LIMIT $4`;
  return { sql, args };
}

/** The latest completed run of a workflow version other than run $3 (index runs_completed: one probe). */
export function latestCompletedSql(t: Tables): string {
  return `SELECT ${runColumns()} FROM ${t.runs}
    WHERE workflow = $1 AND version = $2 AND status = 'completed' AND id <> $3
    ORDER BY finished_at DESC, id DESC LIMIT 1`;
}
