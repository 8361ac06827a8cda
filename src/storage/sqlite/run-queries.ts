// The SQL of the run listings whose WHERE clause depends on the filters: a page of runs, failure groups.

import type Database from "better-sqlite3";
import type { FailureGroupQuery, RunQuery, RunRow } from "../store.js";
import { FOLDED_CONTAINS, foldCase, isShortNeedle, unfoldedForms } from "./fold-case.js";
import { FAILURE_DAY_MS } from "./migrations.js";
import { shortErrorMatch } from "./short-search.js";
import { RUN_COLUMNS } from "./statements.js";

/**
 * A page of runs newest first (keyset on created_at, id), filtered as `q` asks. With tags, the page is read
 * from the first tag's rows in the run_tags_find index, newest first (CROSS JOIN keeps that order), each other
 * tag checked by its primary key: the cost follows the page, not the number of runs. `candidates` is the FTS5 query
 * of the candidates for "few" and "many" (errorSearch gives it for a string of 1 or 2 characters).
 */
export function runsQuery(
  q: RunQuery,
  errors: ErrorPlan = "scan",
  from?: RunCursor,
  candidates: string | null = errorMatch(q.errorContains ?? ""),
): { sql: string; args: unknown[] } {
  const tags = Object.entries(q.tags ?? {});
  if (tags.length > 0) return taggedRunsQuery(q, tags);
  const where: string[] = [];
  const args: unknown[] = [];
  if (from) {
    // The first condition bounds the index range; the second breaks ties on created_at by id.
    where.push("created_at >= ?", "(created_at > ? OR id >= ?)");
    args.push(from.createdAt, from.createdAt, from.id);
  }
  const match = errors === "scan" ? null : candidates;
  if (match !== null && errors === "few") {
    // The candidates drive (CROSS JOIN keeps them first): fewer than ERROR_FEW runs looked up and sorted.
    args.push(match);
    runFilters(q, where, args);
    if (q.before) {
      where.push("(created_at < ? OR (created_at = ? AND id < ?))");
      args.push(q.before.createdAt, q.before.createdAt, q.before.id);
    }
    args.push(q.limit);
    return {
      sql: `SELECT ${RUN_COLUMNS} FROM (SELECT rowid AS candidate FROM run_errors WHERE run_errors MATCH ?) e
        CROSS JOIN runs ON runs.id = e.candidate WHERE ${where.join(" AND ")}
        ORDER BY created_at DESC, id DESC LIMIT ?`,
      args,
    };
  }
  if (match !== null) {
    // Many candidates: the runs with an error are walked newest first (runs_error_created) and each is first
    // checked against the candidates' set (a bloom filter and a lookup, before the row is read); "+id" keeps
    // the planner from looking the candidates up instead (a sort of all of them).
    where.push("+id IN (SELECT rowid FROM run_errors WHERE run_errors MATCH ?)");
    args.push(match);
  }
  runFilters(q, where, args);
  if (q.before) {
    where.push("(created_at < ? OR (created_at = ? AND id < ?))");
    args.push(q.before.createdAt, q.before.createdAt, q.before.id);
  }
  const sql = `SELECT ${RUN_COLUMNS} FROM runs ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, id DESC LIMIT ?`;
  args.push(q.limit);
  return { sql, args };
}

/**
 * How a page with a search in error text reads. "scan": runs_error_created newest first, each error read and
 * searched (a tag filter, whose index drives; a string of 1 or 2 characters that begins many of the index's
 * terms). "few": the candidates, the runs whose errors hold all of the string's trigrams (run_errors, migrations
 * 15 and 16) or for 1 or 2 characters a trigram beginning with it (migration 17, short-search.ts), are looked
 * up and sorted. "many": runs_error_created newest first, each run checked against those candidates before its
 * error is read. Every plan checks the string itself on the error's message (ERROR_TEXT), so all answer the same runs.
 */
export type ErrorPlan = "scan" | "few" | "many";

/** A run's place in the newest-first order (created_at, id). */
type RunCursor = { createdAt: number; id: number };

/** Fewer candidates than this are looked up and sorted ("few"); from it on the index is walked ("many"). */
export const ERROR_FEW = 200;

/**
 * The FTS5 query of the trigrams of `needle` that cover it (one every 3 characters, and the last), ANDed: every
 * error whose message holds `needle` as foldCase folds it matches, others may (run_errors stores no positions).
 * Each trigram is a quoted phrase of the folded letters, ORed with the trigrams of the other letters that fold to
 * them (unfoldedForms): the tokenizer folds A-Z and most others but not İ, Georgian Mtavruli, Cherokee and more
 * (its table is older than Unicode's), and an index of "İstanbul" holds no "ist". Null below 3 characters.
 */
export function errorMatch(needle: string): string | null {
  const chars = Array.from(foldCase(needle));
  if (chars.length < 3) return null;
  const trigrams = new Set<string>();
  for (let i = 0; i + 3 <= chars.length; i += 3) trigrams.add(chars.slice(i, i + 3).join(""));
  trigrams.add(chars.slice(-3).join(""));
  return [...trigrams].map(trigramQuery).join(" AND ");
}

/** A trigram as an FTS5 phrase, or the phrases of every way its letters are written, ORed. */
function trigramQuery(trigram: string): string {
  let ways = [""];
  for (const ch of trigram) ways = ways.flatMap((w) => [ch, ...unfoldedForms(ch)].map((c) => w + c));
  const phrases = ways.map((t) => `"${t.replaceAll('"', '""')}"`);
  return phrases.length === 1 ? phrases[0]! : `(${phrases.join(" OR ")})`;
}

/**
 * The text of runs.error a search reads: the error's message (ErrorInfo JSON), or the whole text when it is not
 * JSON or holds no message. run_errors indexes the same expression (migration 16): keep them one.
 */
export const ERROR_TEXT =
  "CASE WHEN json_valid(error) THEN coalesce(json_extract(error, '$.message'), error) ELSE error END";

/** The runs with an error searched first when there are many candidates (a dense string fills its page there). */
export const NEWEST_ERRORS = 500;

/**
 * A page of runs as `q` asks, read by the plan that suits it. With many candidates the NEWEST_ERRORS newest
 * runs with an error (before the cursor) are searched first: if they fill the page it is the answer (every run
 * newer was searched), else the walk checks the candidates' set. A string few runs' errors hold is read from
 * its candidates; one held by most errors is answered within the newest; the walk bounds the rest. A string of
 * 1 or 2 characters searches the newest errors before it reads the index's terms (errorSearch).
 */
export function readRuns(db: Database.Database, q: RunQuery): RunRow[] {
  const page = (search: ErrorSearch, from?: RunCursor) => {
    const { sql, args } = runsQuery(q, search.plan, from, search.match);
    return db.prepare(sql).all(...args) as RunRow[];
  };
  const scan: ErrorSearch = { plan: "scan", match: null };
  // A string of 1 or 2 characters reads the newest errors before the index's terms: a common one fills its
  // page there, and begins many terms, each of which the vocabulary counts the errors of.
  const search = tagless(q) && isShortNeedle(q.errorContains) ? null : errorSearch(db, q);
  if (search !== null && search.plan !== "many") return page(search);
  const cursor = q.before
    ? {
        sql: "AND (created_at < ? OR (created_at = ? AND id < ?))",
        args: [q.before.createdAt, q.before.createdAt, q.before.id],
      }
    : { sql: "", args: [] };
  const from = db
    .prepare(`SELECT created_at AS createdAt, id FROM runs WHERE error IS NOT NULL ${cursor.sql}
      ORDER BY created_at DESC, id DESC LIMIT 1 OFFSET ?`)
    .get(...cursor.args, NEWEST_ERRORS - 1) as RunCursor | undefined;
  // Fewer runs with an error than that before the cursor: searching them all is bounded already.
  if (from === undefined) return page(scan);
  const newest = page(scan, from);
  if (newest.length === q.limit) return newest;
  const rest = search ?? errorSearch(db, q);
  return page(rest);
}

/** A plan and the FTS5 query of its candidates (null for "scan"). */
export type ErrorSearch = { plan: ErrorPlan; match: string | null };

/**
 * The plan for `q`'s search in error text and its candidates' query: counts the candidates (up to ERROR_FEW)
 * when there are trigrams, or for 1 or 2 characters a few terms that begin with it (none: "few" of none).
 */
export function errorSearch(db: Database.Database, q: RunQuery): ErrorSearch {
  if (!q.errorContains || !tagless(q)) return { plan: "scan", match: null };
  const match = isShortNeedle(q.errorContains)
    ? shortErrorMatch(db, q.errorContains)
    : errorMatch(q.errorContains);
  if (match === null) return { plan: "scan", match: null };
  const candidates = db
    .prepare("SELECT count(*) FROM (SELECT rowid FROM run_errors WHERE run_errors MATCH ? LIMIT ?)")
    .pluck()
    .get(match, ERROR_FEW) as number;
  return { plan: candidates < ERROR_FEW ? "few" : "many", match };
}

function tagless(q: RunQuery): boolean {
  return Object.keys(q.tags ?? {}).length === 0;
}

/** The WHERE conditions on runs' own columns (every filter but tags and the cursor). */
function runFilters(q: RunQuery, where: string[], args: unknown[]): void {
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
    // "error IS NOT NULL" lets the planner take the partial index runs_error_created; with run_errors, this
    // checks each candidate.
    // SQLite's lower() folds A-Z only: FOLDED_CONTAINS folds as PostgreSQL's lower() does (fold-case.ts).
    where.push(`error IS NOT NULL AND ${FOLDED_CONTAINS}(CAST(${ERROR_TEXT} AS TEXT), ?)`);
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
  if (q.version !== undefined) {
    where.push("version = ?");
    args.push(q.version);
  }
  if (q.failureSignature !== undefined) {
    where.push("failure_signature = ? AND status IN ('failed', 'retrying')");
    args.push(q.failureSignature);
  }
}

function taggedRunsQuery(q: RunQuery, tags: Array<[string, string]>): { sql: string; args: unknown[] } {
  const [first, ...rest] = tags as [[string, string], ...Array<[string, string]>];
  const where = ["t.name = ?", "t.value = ?"];
  const args: unknown[] = [first[0], first[1]];
  for (const [name, value] of rest) {
    where.push("EXISTS (SELECT 1 FROM run_tags o WHERE o.run_id = t.run_id AND o.name = ? AND o.value = ?)");
    args.push(name, value);
  }
  runFilters(q, where, args);
  // The time bounds again on the tag rows, so they narrow the index range too.
  if (q.createdAfter !== undefined) {
    where.push("t.run_created_at >= ?");
    args.push(q.createdAfter);
  }
  if (q.createdBefore !== undefined) {
    where.push("t.run_created_at < ?");
    args.push(q.createdBefore);
  }
  if (q.before) {
    // The first condition bounds the index range; the second breaks ties on created_at by id.
    where.push("t.run_created_at <= ?", "(t.run_created_at < ? OR t.run_id < ?)");
    args.push(q.before.createdAt, q.before.createdAt, q.before.id);
  }
  const sql = `SELECT ${RUN_COLUMNS} FROM run_tags t CROSS JOIN runs ON runs.id = t.run_id
      WHERE ${where.join(" AND ")} ORDER BY t.run_created_at DESC, t.run_id DESC LIMIT ?`;
  args.push(q.limit);
  return { sql, args };
}

/** Failed and retrying runs since `q.since` grouped by signature: the count query, the groups query (LIMIT last). */
export function failureGroupsQuery(q: FailureGroupQuery): { count: string; groups: string; args: unknown[] } {
  const where = [
    "failure_signature IS NOT NULL",
    "status IN ('failed', 'retrying')",
    "coalesce(finished_at, updated_at) >= ?",
  ];
  const args: unknown[] = [q.since];
  if (q.workflow !== undefined) {
    where.push("workflow = ?");
    args.push(q.workflow);
  }
  if (q.signature !== undefined) {
    where.push("failure_signature = ?");
    args.push(q.signature);
  }
  for (const [name, value] of Object.entries(q.tags ?? {})) {
    where.push("EXISTS (SELECT 1 FROM run_tags t WHERE t.run_id = runs.id AND t.name = ? AND t.value = ?)");
    args.push(name, value);
  }
  const from = `FROM runs WHERE ${where.join(" AND ")}`;
  return {
    count: `SELECT count(*) ${from}`,
    groups: `SELECT failure_signature AS signature, workflow, count(*) AS count, sum(status = 'retrying') AS retrying,
          min(coalesce(finished_at, updated_at)) AS firstAt, max(coalesce(finished_at, updated_at)) AS lastAt
        ${from} GROUP BY failure_signature, workflow ORDER BY count DESC, lastAt DESC LIMIT ?`,
    args,
  };
}

/**
 * The failure groups read from failure_counts (migration 12) instead of the runs: the days after the one `since`
 * falls in are summed from the counts; that day's failures at or after `since`, and each group's first and
 * last failure, are read from the runs_failure_at index (a range and two probes per group). The answer is the
 * grouped query's; null when the counts cannot answer (a tag filter, a window before 1970).
 */
export function failureCountsQuery(q: FailureGroupQuery): { sql: string; args: unknown[] } | null {
  if ((q.tags && Object.keys(q.tags).length > 0) || q.since < 0) return null;
  const d0 = Math.floor(q.since / FAILURE_DAY_MS);
  const where = ["day >= ?"];
  const args: unknown[] = [d0, d0, d0];
  if (q.workflow !== undefined) {
    where.push("workflow = ?");
    args.push(q.workflow);
  }
  if (q.signature !== undefined) {
    where.push("signature = ?");
    args.push(q.signature);
  }
  // Every read of the runs bounds the failure time (the latest failure too: a group counted has one at or
  // after since), so each is a range of runs_failure_at, not the group's rows in runs_failure_created.
  const at = "coalesce(finished_at, updated_at)";
  const group = `FROM runs WHERE failure_signature = g.signature AND workflow = g.workflow
        AND failure_signature IS NOT NULL AND status IN ('failed', 'retrying')`;
  const firstDay = `${group} AND ${at} >= ? AND ${at} < ?`;
  const end = (d0 + 1) * FAILURE_DAY_MS;
  args.push(q.since, end, q.since, end, q.since, q.since, q.limit);
  const sql = `WITH g AS (
      SELECT signature, workflow, sum(CASE WHEN day > ? THEN runs ELSE 0 END) AS later,
        sum(CASE WHEN day > ? THEN retrying ELSE 0 END) AS laterRetrying
      FROM failure_counts WHERE ${where.join(" AND ")} GROUP BY signature, workflow
    ), c AS MATERIALIZED (
      SELECT g.signature, g.workflow,
        g.later + (SELECT count(*) ${firstDay}) AS count,
        g.laterRetrying + (SELECT count(*) ${firstDay} AND status = 'retrying') AS retrying,
        (SELECT min(${at}) ${group} AND ${at} >= ?) AS firstAt,
        (SELECT max(${at}) ${group} AND ${at} >= ?) AS lastAt
      FROM g
    )
    SELECT signature, workflow, count, retrying, firstAt, lastAt, sum(count) OVER () AS total
    FROM c WHERE count > 0 ORDER BY count DESC, lastAt DESC, signature, workflow LIMIT ?`;
  return { sql, args };
}
