// Retention on PostgreSQL: expired runs found by a range read of runs_finished and locked with SKIP LOCKED
// (engines sharing the database prune different runs), deleted with every row of theirs in one transaction.
// Autovacuum makes the space reusable; nothing to reclaim by hand.
//
// IMPORTANT: a run whose parent is unfinished, or that has a pending request, is never expired (see Store).

import type { PrunedCount, RetentionRule } from "../store.js";
import type { Tables } from "./sql.js";
import type { Query } from "./transaction.js";

/** The prune statements of one schema. */
export function pruneStatements(t: Tables) {
  // The parent's status as a lookup per candidate by primary key: written as NOT EXISTS, the planner hashes
  // every unfinished run of the table for each batch. (A parent that is gone counts as finished.)
  const where = `r.workflow = $1 AND r.status = $2 AND r.finished_at < $3
    AND (r.parent_run_id IS NULL OR coalesce((SELECT p.status FROM ${t.runs} p WHERE p.id = r.parent_run_id),
      'completed') IN ('completed', 'failed', 'cancelled'))
    AND NOT EXISTS (SELECT 1 FROM ${t.requests} q WHERE q.run_id = r.id AND q.done_at IS NULL)`;
  const ids = "ANY($1::bigint[])";
  return {
    count: `SELECT count(*)::int AS n FROM ${t.runs} r WHERE ${where}`,
    next: `SELECT min(finished_at) AS at FROM ${t.runs} WHERE workflow = $1 AND status = $2 AND finished_at >= $3`,
    // Ordered by the index alone (an id tie-break would sort every expired run for each batch).
    select: `SELECT r.id FROM ${t.runs} r WHERE ${where} ORDER BY r.finished_at LIMIT $4
      FOR UPDATE OF r SKIP LOCKED`,
    deletes: [
      `DELETE FROM ${t.entries} WHERE run_id = ${ids}`,
      `DELETE FROM ${t.messages} WHERE run_id = ${ids}`,
      `DELETE FROM ${t.requests} WHERE run_id = ${ids}`,
      `DELETE FROM ${t.rejections} WHERE run_id = ${ids}`,
      `DELETE FROM ${t.runTags} WHERE run_id = ${ids}`,
      `UPDATE ${t.runs} SET parent_run_id = NULL WHERE parent_run_id = ${ids}`,
      `UPDATE ${t.schedules} SET last_run_id = NULL WHERE last_run_id = ${ids}`,
      `DELETE FROM ${t.runs} WHERE id = ${ids}`,
    ],
  };
}

type Sql = ReturnType<typeof pruneStatements>;

/** Store.countExpired: one count per rule. */
export async function countExpired(q: Query, sql: Sql, rules: RetentionRule[]): Promise<PrunedCount[]> {
  const out: PrunedCount[] = [];
  for (const r of rules) {
    const { n } = (
      await q<{ n: number }>("wm_prune_count", sql.count, [r.workflow, r.status, r.finishedBefore])
    ).rows[0]!;
    if (n > 0) out.push({ workflow: r.workflow, status: r.status, count: n });
  }
  return out;
}

/** Store.nextToExpire: one range read per rule. */
export async function nextToExpire(
  q: Query,
  sql: Sql,
  rules: RetentionRule[],
): Promise<Array<number | null>> {
  const out: Array<number | null> = [];
  for (const r of rules) {
    const { at } = (
      await q<{ at: string | null }>("wm_prune_next", sql.next, [r.workflow, r.status, r.finishedBefore])
    ).rows[0]!;
    out.push(at === null ? null : Number(at));
  }
  return out;
}

/** Store.pruneRuns inside the caller's transaction. */
export async function pruneRuns(
  q: Query,
  sql: Sql,
  rules: RetentionRule[],
  limit: number,
): Promise<PrunedCount[]> {
  const out: PrunedCount[] = [];
  const ids: number[] = [];
  for (const r of rules) {
    if (ids.length >= limit) break;
    const found = (
      await q<{ id: number }>("wm_prune_select", sql.select, [
        r.workflow,
        r.status,
        r.finishedBefore,
        limit - ids.length,
      ])
    ).rows.map((row) => Number(row.id));
    if (found.length === 0) continue;
    ids.push(...found);
    out.push({ workflow: r.workflow, status: r.status, count: found.length });
  }
  if (ids.length === 0) return out;
  for (const [i, text] of sql.deletes.entries()) await q(`wm_prune_delete_${i}`, text, [ids]);
  return out;
}
