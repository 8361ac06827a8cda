// The audit's filters as SQL, shared by both stores (placeholders differ: `?` on SQLite, `$n` on PostgreSQL).

import type { AuditFilter, AuditQuery } from "./rows.js";

/** Columns of the audit table as AuditRow fields (quoted aliases read the same on both backends). */
export const AUDIT_COLUMNS = `id, at, surface, client, action, workflow, run_key AS "runKey", run_id AS "runId",
  args, args_cut AS "argsCut", ok, error_code AS "errorCode", error_message AS "errorMessage"`;

/** The WHERE clause (or "") and its values for a filter; `ph(n)` writes the n-th placeholder (1-based). */
export function auditWhere(
  filter: AuditFilter & { beforeId?: number },
  ph: (n: number) => string,
): { where: string; values: unknown[] } {
  const parts: string[] = [];
  const values: unknown[] = [];
  const add = (sql: string, value: unknown) => {
    values.push(value);
    parts.push(sql.replace("?", ph(values.length)));
  };
  if (filter.runId !== undefined) add("run_id = ?", filter.runId);
  if (filter.workflow !== undefined) add("workflow = ?", filter.workflow);
  if (filter.runKey !== undefined) add("run_key = ?", filter.runKey);
  if (filter.surface !== undefined) add("surface = ?", filter.surface);
  if (filter.since !== undefined) add("at >= ?", filter.since);
  if (filter.until !== undefined) add("at < ?", filter.until);
  if (filter.beforeId !== undefined) add("id < ?", filter.beforeId);
  return { where: parts.length ? `WHERE ${parts.join(" AND ")}` : "", values };
}

/** The SELECT of a page of audit rows, newest first, from `table`. */
export function auditSelect(table: string, q: AuditQuery, ph: (n: number) => string) {
  const { where, values } = auditWhere(q, ph);
  values.push(q.limit);
  return {
    text: `SELECT ${AUDIT_COLUMNS} FROM ${table} ${where} ORDER BY id DESC LIMIT ${ph(values.length)}`,
    values,
  };
}

/** The COUNT of the audit rows a filter matches. */
export function auditCount(table: string, filter: AuditFilter, ph: (n: number) => string) {
  const { where, values } = auditWhere(filter, ph);
  return { text: `SELECT count(*) AS n FROM ${table} ${where}`, values };
}

/** The INSERT of one row, its values in column order. */
export const AUDIT_INSERT_COLUMNS =
  "at, surface, client, action, workflow, run_key, run_id, args, args_cut, ok, error_code, error_message";
