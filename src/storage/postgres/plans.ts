// The bulk plan tables on PostgreSQL: a plan's pinned runs in order, each outcome written once (the
// UPDATE ... WHERE outcome IS NULL takes the row lock, so a second process's write of it matches no row).

import type { PlanOutcome, PlanRow, PlanRunRow } from "../store.js";
import type { Tables } from "./sql.js";
import type { Query } from "./transaction.js";

const RUN_COLUMNS = `position, run_id AS "runId", outcome, reason, done_at AS "doneAt"`;

/** The plan statements of one schema. */
export function planStatements(t: Tables) {
  const plans = t.plans;
  const runs = t.planRuns;
  return {
    insertPlan: `INSERT INTO ${plans} (token, action, spec, created_at, expires_at, total)
      VALUES ($1, $2, $3, $4, $5, $6)`,
    insertRuns: `INSERT INTO ${runs} (token, position, run_id)
      SELECT $1, p, id FROM unnest($2::bigint[]) WITH ORDINALITY AS v(id, p)`,
    one: `SELECT token, action, spec, created_at AS "createdAt", expires_at AS "expiresAt", total
      FROM ${plans} WHERE token = $1`,
    runs: `SELECT ${RUN_COLUMNS} FROM ${runs} WHERE token = $1 AND position > $2 ORDER BY position LIMIT $3`,
    pending: `SELECT ${RUN_COLUMNS} FROM ${runs} WHERE token = $1 AND position > $2 AND outcome IS NULL
      ORDER BY position LIMIT $3`,
    record: `UPDATE ${runs} r SET outcome = v.outcome, reason = v.reason, done_at = $2
      FROM unnest($3::bigint[], $4::text[], $5::text[]) AS v(run_id, outcome, reason)
      WHERE r.token = $1 AND r.run_id = v.run_id AND r.outcome IS NULL RETURNING r.run_id AS "runId"`,
    progress: `SELECT outcome, count(*)::int AS count FROM ${runs} WHERE token = $1 GROUP BY outcome`,
  };
}

type Sql = ReturnType<typeof planStatements>;

/** Store.createPlan inside the caller's transaction. */
export async function createPlan(q: Query, sql: Sql, plan: PlanRow, runIds: number[]): Promise<void> {
  await q("wm_plan_insert", sql.insertPlan, [
    plan.token,
    plan.action,
    plan.spec,
    plan.createdAt,
    plan.expiresAt,
    plan.total,
  ]);
  await q("wm_plan_runs_insert", sql.insertRuns, [plan.token, runIds]);
}

export async function getPlan(q: Query, sql: Sql, token: string): Promise<PlanRow | undefined> {
  return (await q<PlanRow>("wm_plan_get", sql.one, [token])).rows[0];
}

export async function planRuns(
  q: Query,
  sql: Sql,
  token: string,
  o: { after: number; limit: number; pendingOnly: boolean },
): Promise<PlanRunRow[]> {
  const [name, text] = o.pendingOnly ? ["wm_plan_pending", sql.pending] : ["wm_plan_runs", sql.runs];
  return (await q<PlanRunRow>(name, text, [token, o.after, o.limit])).rows;
}

/** Store.recordPlanOutcomes inside the caller's transaction. */
export async function recordPlanOutcomes(
  q: Query,
  sql: Sql,
  token: string,
  outcomes: PlanOutcome[],
  now: number,
): Promise<number[]> {
  if (outcomes.length === 0) return [];
  const res = await q<{ runId: number }>("wm_plan_record", sql.record, [
    token,
    now,
    outcomes.map((o) => o.runId),
    outcomes.map((o) => o.outcome),
    outcomes.map((o) => o.reason),
  ]);
  return res.rows.map((r) => r.runId);
}

export async function planProgress(
  q: Query,
  sql: Sql,
  token: string,
): Promise<Array<{ outcome: string | null; count: number }>> {
  return (await q<{ outcome: string | null; count: number }>("wm_plan_progress", sql.progress, [token])).rows;
}
