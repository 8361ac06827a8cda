// The SQL of the run listings whose WHERE clause depends on the filters: a page of runs, failure groups.

import type { FailureGroupQuery, RunQuery } from "../store.js";
import { runColumns, type Tables } from "./sql.js";

/** A page of runs newest first (keyset on created_at, id), filtered as `q` asks; $n parameters in `args`. */
export function runsQuery(t: Tables, q: RunQuery): { text: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
  const arg = (v: unknown) => {
    args.push(v);
    return `$${args.length}`;
  };
  if (q.workflow !== undefined) where.push(`workflow = ${arg(q.workflow)}`);
  if (q.status && q.status.length > 0) where.push(`status = ANY(${arg(q.status)}::text[])`);
  if (q.key !== undefined) where.push(`key = ${arg(q.key)}`);
  if (q.keyContains) where.push(`strpos(key, ${arg(q.keyContains)}) > 0`);
  if (q.errorContains) where.push(`strpos(lower(error), lower(${arg(q.errorContains)})) > 0`);
  if (q.createdAfter !== undefined) where.push(`created_at >= ${arg(q.createdAfter)}`);
  if (q.createdBefore !== undefined) where.push(`created_at < ${arg(q.createdBefore)}`);
  if (q.version !== undefined) where.push(`version = ${arg(q.version)}`);
  if (q.failureSignature !== undefined)
    where.push(`failure_signature = ${arg(q.failureSignature)} AND status IN ('failed', 'retrying')`);
  if (q.before) where.push(`(created_at, id) < (${arg(q.before.createdAt)}, ${arg(q.before.id)})`);
  const text = `SELECT ${runColumns()} FROM ${t.runs} ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, id DESC LIMIT ${arg(q.limit)}`;
  return { text, args };
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

/** The latest completed run of a workflow version other than run $3 (index runs_completed: one probe). */
export function latestCompletedSql(t: Tables): string {
  return `SELECT ${runColumns()} FROM ${t.runs}
    WHERE workflow = $1 AND version = $2 AND status = 'completed' AND id <> $3
    ORDER BY finished_at DESC, id DESC LIMIT 1`;
}
