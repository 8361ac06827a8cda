// `waymark migrate`'s copy of the bulk plans (replay_runs, cancel_runs): each plan with its pinned runs, their
// ids mapped to the target's, and what became of each, so a plan made on SQLite can be carried on there.

import type Database from "better-sqlite3";
import type { Tables } from "./sql.js";

type Row = Record<string, any>;
type Exec = (text: string, values: unknown[]) => Promise<Row[]>;

/** Copies every plan (the target keeps its own of the same token); returns how many were added. */
export async function copyPlans(
  db: Database.Database,
  exec: Exec,
  t: Tables,
  runIds: ReadonlyMap<number, number>,
): Promise<number> {
  const plans = db.prepare("SELECT * FROM bulk_plans ORDER BY token").all() as Row[];
  if (plans.length === 0) return 0;
  const added = await exec(
    `INSERT INTO ${t.plans} (token, action, spec, created_at, expires_at, total)
     SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::int[])
     ON CONFLICT (token) DO NOTHING RETURNING token`,
    ["token", "action", "spec", "created_at", "expires_at", "total"].map((c) => plans.map((p) => p[c])),
  );
  const tokens = new Set(added.map((r) => r.token as string));
  const runs = db
    .prepare("SELECT * FROM bulk_plan_runs ORDER BY token, position")
    .all()
    .filter((r) => tokens.has((r as Row).token) && runIds.has((r as Row).run_id)) as Row[];
  if (runs.length) {
    await exec(
      `INSERT INTO ${t.planRuns} (token, position, run_id, outcome, reason, done_at)
       SELECT * FROM unnest($1::text[], $2::int[], $3::bigint[], $4::text[], $5::text[], $6::bigint[])`,
      [
        runs.map((r) => r.token),
        runs.map((r) => r.position),
        runs.map((r) => runIds.get(r.run_id)),
        runs.map((r) => r.outcome),
        runs.map((r) => r.reason),
        runs.map((r) => r.done_at),
      ],
    );
  }
  return tokens.size;
}
