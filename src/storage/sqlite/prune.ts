// Retention on SQLite: expired runs found by a range read of runs_finished, deleted with every row of theirs
// in one short transaction, then free pages beyond a slack handed back to the file system.
//
// IMPORTANT: a run whose parent is unfinished, or that has a pending request, is never expired (see Store).

import type Database from "better-sqlite3";
import type { PrunedCount, RetentionRule } from "../store.js";
import { reclaimFreePages } from "./vacuum.js";

/** Conditions every expired run meets besides its rule (r is the run). */
const KEEP_OUT = `NOT EXISTS (SELECT 1 FROM runs p WHERE p.id = r.parent_run_id
      AND p.status NOT IN ('completed', 'failed', 'cancelled'))
    AND NOT EXISTS (SELECT 1 FROM requests q WHERE q.run_id = r.id AND q.done_at IS NULL)`;
const RULE = "r.workflow = ? AND r.status = ? AND r.finished_at < ?";
/** The expired runs of one rule, longest finished first (a range read of runs_finished). */
export const EXPIRED_SQL = `SELECT id FROM runs r WHERE ${RULE} AND ${KEEP_OUT} ORDER BY r.finished_at, r.id LIMIT ?`;

/** The prune statements of one SQLite database. */
export class SqlitePruner {
  private readonly select: Database.Statement;
  private readonly count: Database.Statement;
  private readonly next: Database.Statement;
  private readonly deletes: Database.Statement[];
  private readonly tx: Database.Transaction<(rules: RetentionRule[], limit: number) => PrunedCount[]>;

  constructor(private readonly db: Database.Database) {
    this.select = db
      .prepare(`SELECT id FROM runs r WHERE ${RULE} AND ${KEEP_OUT} ORDER BY r.finished_at, r.id LIMIT ?`)
      .pluck();
    this.count = db.prepare(`SELECT count(*) FROM runs r WHERE ${RULE} AND ${KEEP_OUT}`).pluck();
    this.next = db
      .prepare("SELECT min(finished_at) FROM runs WHERE workflow = ? AND status = ? AND finished_at >= ?")
      .pluck();
    const ids = "(SELECT value FROM json_each(?))";
    this.deletes = [
      `DELETE FROM entries WHERE run_id IN ${ids}`,
      `DELETE FROM messages WHERE run_id IN ${ids}`,
      `DELETE FROM requests WHERE run_id IN ${ids}`,
      `DELETE FROM rejections WHERE run_id IN ${ids}`,
      `DELETE FROM run_tags WHERE run_id IN ${ids}`,
      `UPDATE runs SET parent_run_id = NULL WHERE parent_run_id IN ${ids}`,
      `UPDATE schedules SET last_run_id = NULL WHERE last_run_id IN ${ids}`,
      `DELETE FROM runs WHERE id IN ${ids}`,
    ].map((sql) => db.prepare(sql));
    this.tx = db.transaction((rules, limit) => this.deleteExpired(rules, limit));
  }

  countExpired(rules: RetentionRule[]): PrunedCount[] {
    const out: PrunedCount[] = [];
    for (const r of rules) {
      const count = this.count.get(r.workflow, r.status, r.finishedBefore) as number;
      if (count > 0) out.push({ workflow: r.workflow, status: r.status, count });
    }
    return out;
  }

  nextToExpire(rules: RetentionRule[]): Array<number | null> {
    return rules.map((r) => (this.next.get(r.workflow, r.status, r.finishedBefore) as number | null) ?? null);
  }

  prune(rules: RetentionRule[], limit: number): PrunedCount[] {
    const deleted = this.tx.immediate(rules, limit);
    if (deleted.length > 0) reclaimFreePages(this.db);
    return deleted;
  }

  private deleteExpired(rules: RetentionRule[], limit: number): PrunedCount[] {
    const out: PrunedCount[] = [];
    const ids: number[] = [];
    for (const r of rules) {
      if (ids.length >= limit) break;
      const found = this.select.all(r.workflow, r.status, r.finishedBefore, limit - ids.length) as number[];
      if (found.length === 0) continue;
      ids.push(...found);
      out.push({ workflow: r.workflow, status: r.status, count: found.length });
    }
    if (ids.length === 0) return out;
    const json = JSON.stringify(ids);
    for (const d of this.deletes) d.run(json);
    return out;
  }
}
