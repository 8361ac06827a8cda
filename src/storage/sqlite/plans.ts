// The bulk plan tables on SQLite: a plan's pinned runs in order, each outcome written once.

import type Database from "better-sqlite3";
import type { PlanOutcome, PlanRow, PlanRunRow } from "../store.js";

const RUN_COLUMNS = "position, run_id AS runId, outcome, reason, done_at AS doneAt";

/** The plan statements of one SQLite database. */
export class SqlitePlans {
  private readonly insertPlan: Database.Statement;
  private readonly insertRun: Database.Statement;
  private readonly one: Database.Statement;
  private readonly runs: Database.Statement;
  private readonly pending: Database.Statement;
  private readonly record: Database.Statement;
  private readonly progressOf: Database.Statement;

  constructor(private readonly db: Database.Database) {
    this.insertPlan = db.prepare(
      "INSERT INTO bulk_plans (token, action, spec, created_at, expires_at, total) VALUES (?, ?, ?, ?, ?, ?)",
    );
    this.insertRun = db.prepare("INSERT INTO bulk_plan_runs (token, position, run_id) VALUES (?, ?, ?)");
    this.one = db.prepare(
      `SELECT token, action, spec, created_at AS createdAt, expires_at AS expiresAt, total
       FROM bulk_plans WHERE token = ?`,
    );
    this.runs = db.prepare(
      `SELECT ${RUN_COLUMNS} FROM bulk_plan_runs WHERE token = ? AND position > ? ORDER BY position LIMIT ?`,
    );
    this.pending = db.prepare(
      `SELECT ${RUN_COLUMNS} FROM bulk_plan_runs WHERE token = ? AND position > ? AND outcome IS NULL
       ORDER BY position LIMIT ?`,
    );
    this.record = db.prepare(
      `UPDATE bulk_plan_runs SET outcome = ?, reason = ?, done_at = ?
       WHERE token = ? AND run_id = ? AND outcome IS NULL`,
    );
    this.progressOf = db.prepare(
      "SELECT outcome, count(*) AS count FROM bulk_plan_runs WHERE token = ? GROUP BY outcome",
    );
  }

  create(plan: PlanRow, runIds: number[]): void {
    this.db
      .transaction(() => {
        this.insertPlan.run(plan.token, plan.action, plan.spec, plan.createdAt, plan.expiresAt, plan.total);
        for (const [i, id] of runIds.entries()) this.insertRun.run(plan.token, i + 1, id);
      })
      .immediate();
  }

  get(token: string): PlanRow | undefined {
    return this.one.get(token) as PlanRow | undefined;
  }

  list(token: string, o: { after: number; limit: number; pendingOnly: boolean }): PlanRunRow[] {
    return (o.pendingOnly ? this.pending : this.runs).all(token, o.after, o.limit) as PlanRunRow[];
  }

  recordOutcomes(token: string, outcomes: PlanOutcome[], now: number): number[] {
    return this.db
      .transaction(() =>
        outcomes
          .filter((o) => this.record.run(o.outcome, o.reason, now, token, o.runId).changes > 0)
          .map((o) => o.runId),
      )
      .immediate();
  }

  progress(token: string): Array<{ outcome: string | null; count: number }> {
    return this.progressOf.all(token) as Array<{ outcome: string | null; count: number }>;
  }
}
