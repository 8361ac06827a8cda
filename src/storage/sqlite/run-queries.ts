// The SQL of the run listings whose WHERE clause depends on the filters: a page of runs, failure groups.

import type { FailureGroupQuery, RunQuery } from "../store.js";
import { RUN_COLUMNS } from "./statements.js";

/** A page of runs newest first (keyset on created_at, id), filtered as `q` asks. */
export function runsQuery(q: RunQuery): { sql: string; args: unknown[] } {
  const where: string[] = [];
  const args: unknown[] = [];
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
    where.push("instr(lower(error), lower(?)) > 0");
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
  if (q.before) {
    where.push("(created_at < ? OR (created_at = ? AND id < ?))");
    args.push(q.before.createdAt, q.before.createdAt, q.before.id);
  }
  const sql = `SELECT ${RUN_COLUMNS} FROM runs ${where.length ? `WHERE ${where.join(" AND ")}` : ""}
      ORDER BY created_at DESC, id DESC LIMIT ?`;
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
  const from = `FROM runs WHERE ${where.join(" AND ")}`;
  return {
    count: `SELECT count(*) ${from}`,
    groups: `SELECT failure_signature AS signature, workflow, count(*) AS count, sum(status = 'retrying') AS retrying,
          min(coalesce(finished_at, updated_at)) AS firstAt, max(coalesce(finished_at, updated_at)) AS lastAt
        ${from} GROUP BY failure_signature, workflow ORDER BY count DESC, lastAt DESC LIMIT ?`,
    args,
  };
}
