// The schedules table on SQLite: declared by code at start, advanced by compare-and-set when a firing is due.

import type Database from "better-sqlite3";
import type { BatchResult, ScheduleAdvance, ScheduleDecl, ScheduleRow, WriteBatch } from "../store.js";
import { onFirstUse } from "./statements.js";

const COLUMNS = `name, workflow, spec, next_due AS nextDue, paused, orphaned, last_due AS lastDue,
  last_outcome AS lastOutcome, last_run_id AS lastRunId, updated_at AS updatedAt`;

type Raw = Omit<ScheduleRow, "paused" | "orphaned"> & { paused: number; orphaned: number };

/** The schedule statements of one SQLite database; `apply` writes a batch inside the caller's transaction. */
export class SqliteSchedules {
  private readonly s;

  constructor(
    private readonly db: Database.Database,
    private readonly apply: (batch: WriteBatch) => BatchResult,
  ) {
    this.s = onFirstUse(db, {
      all: `SELECT ${COLUMNS} FROM schedules ORDER BY name`,
      insert: `INSERT INTO schedules (name, workflow, spec, next_due, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET workflow = excluded.workflow, orphaned = 0,
         next_due = CASE WHEN schedules.spec <> excluded.spec OR schedules.next_due IS NULL
           THEN excluded.next_due ELSE schedules.next_due END,
         spec = excluded.spec, updated_at = excluded.updated_at`,
      orphanAll: "UPDATE schedules SET orphaned = 1, updated_at = ? WHERE orphaned = 0",
      advance: `UPDATE schedules SET next_due = ?, updated_at = ?,
         last_due = coalesce(?, last_due), last_outcome = coalesce(?, last_outcome)
       WHERE name = ? AND next_due IS ? AND paused = 0`,
      lastRun: "UPDATE schedules SET last_run_id = ? WHERE name = ?",
      pause:
        "UPDATE schedules SET paused = ?, next_due = CASE WHEN ? THEN next_due ELSE NULL END, updated_at = ? WHERE name = ?",
    });
  }

  list(): ScheduleRow[] {
    return (this.s.all.all() as Raw[]).map((r) => ({
      ...r,
      paused: r.paused === 1,
      orphaned: r.orphaned === 1,
    }));
  }

  sync(decls: ScheduleDecl[], now: number): void {
    this.db
      .transaction(() => {
        // Every schedule is orphaned but those the code declares (the upsert clears the flag).
        this.s.orphanAll.run(now);
        for (const d of decls) this.s.insert.run(d.name, d.workflow, d.spec, d.nextDue, now);
      })
      .immediate();
  }

  advanceTo(a: ScheduleAdvance, batch: WriteBatch | null): BatchResult | null {
    return this.db
      .transaction(() => {
        const changed = this.s.advance.run(
          a.next,
          a.now,
          a.fired?.due ?? null,
          a.fired?.outcome ?? null,
          a.name,
          a.expected,
        ).changes;
        if (changed !== 1) return null;
        const result: BatchResult = batch ? this.apply(batch) : { created: [], messages: [], requests: [] };
        const run = result.created[0]?.run;
        if (run) this.s.lastRun.run(run.id, a.name);
        return result;
      })
      .immediate();
  }

  setPaused(name: string, paused: boolean, now: number): boolean {
    return this.s.pause.run(paused ? 1 : 0, paused ? 1 : 0, now, name).changes === 1;
  }
}
