// The schedules table on PostgreSQL: declared by code at start, advanced by compare-and-set when a firing is
// due (the UPDATE's row lock makes a second process's advance of the same firing match no row).

import type { BatchResult, ScheduleAdvance, ScheduleDecl, ScheduleRow, WriteBatch } from "../store.js";
import type { Tables } from "./sql.js";
import type { Query } from "./transaction.js";

/** The schedule statements of one schema. */
export function scheduleStatements(t: Tables) {
  return {
    all: `SELECT name, workflow, spec, next_due AS "nextDue", paused, orphaned, last_due AS "lastDue",
      last_outcome AS "lastOutcome", last_run_id AS "lastRunId", updated_at AS "updatedAt"
      FROM ${t.schedules} ORDER BY name`,
    orphanAll: `UPDATE ${t.schedules} SET orphaned = true, updated_at = $1 WHERE orphaned = false`,
    upsert: `INSERT INTO ${t.schedules} (name, workflow, spec, next_due, updated_at)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[])
      ON CONFLICT (name) DO UPDATE SET workflow = excluded.workflow, orphaned = false,
        next_due = CASE WHEN ${t.schedules}.spec <> excluded.spec OR ${t.schedules}.next_due IS NULL
          THEN excluded.next_due ELSE ${t.schedules}.next_due END,
        spec = excluded.spec, updated_at = excluded.updated_at`,
    advance: `UPDATE ${t.schedules} SET next_due = $1, updated_at = $2,
        last_due = coalesce($3, last_due), last_outcome = coalesce($4, last_outcome)
      WHERE name = $5 AND next_due IS NOT DISTINCT FROM $6 AND paused = false`,
    lastRun: `UPDATE ${t.schedules} SET last_run_id = $1 WHERE name = $2`,
    pause: `UPDATE ${t.schedules} SET paused = $1, next_due = CASE WHEN $1 THEN next_due ELSE NULL END,
      updated_at = $2 WHERE name = $3`,
  };
}

type Sql = ReturnType<typeof scheduleStatements>;

/** Every stored schedule, by name. */
export async function listSchedules(q: Query, sql: Sql): Promise<ScheduleRow[]> {
  return (await q<ScheduleRow>("wm_schedules", sql.all, [])).rows;
}

/** See Store.syncSchedules; runs inside the caller's transaction (names sorted: concurrent syncs cannot deadlock). */
export async function syncSchedules(q: Query, sql: Sql, decls: ScheduleDecl[], now: number): Promise<void> {
  const rows = [...decls].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  await q("wm_schedules_orphan", sql.orphanAll, [now]);
  await q("wm_schedules_upsert", sql.upsert, [
    rows.map((d) => d.name),
    rows.map((d) => d.workflow),
    rows.map((d) => d.spec),
    rows.map((d) => d.nextDue),
    rows.map(() => now),
  ]);
}

/**
 * Store.advanceSchedule inside the caller's transaction: the compare-and-set, then (when it moved the schedule)
 * the batch through `apply` and the run it created as the schedule's last run. Null when it had moved on.
 */
export async function advanceSchedule(
  q: Query,
  sql: Sql,
  a: ScheduleAdvance,
  batch: WriteBatch | null,
  apply: (q: Query, batch: WriteBatch) => Promise<BatchResult>,
): Promise<BatchResult | null> {
  const res = await q("wm_schedule_advance", sql.advance, [
    a.next,
    a.now,
    a.fired?.due ?? null,
    a.fired?.outcome ?? null,
    a.name,
    a.expected,
  ]);
  if (res.rowCount !== 1) return null;
  const result: BatchResult = batch ? await apply(q, batch) : { created: [], messages: [], requests: [] };
  const run = result.created[0]?.run;
  if (run) await q("wm_schedule_last_run", sql.lastRun, [run.id, a.name]);
  return result;
}

/** Pauses or resumes (clearing next_due); true when the schedule exists. */
export async function pauseSchedule(
  q: Query,
  sql: Sql,
  name: string,
  paused: boolean,
  now: number,
): Promise<boolean> {
  return (await q("wm_schedule_pause", sql.pause, [paused, now, name])).rowCount === 1;
}
