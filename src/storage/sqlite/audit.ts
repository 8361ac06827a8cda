// The audit table on SQLite: one INSERT per write, reads newest first. No statement here changes a row.

import type Database from "better-sqlite3";
import { AUDIT_INSERT_COLUMNS, auditCount, auditSelect } from "../audit-sql.js";
import type { AuditAppend, AuditFilter, AuditQuery, AuditRow } from "../store.js";

type Raw = Omit<AuditRow, "argsCut" | "ok"> & { argsCut: number; ok: number };

/** The audit statements of one SQLite database (the filtered reads are prepared per shape, cached). */
export class SqliteAudit {
  private readonly insert: Database.Statement;
  private readonly cache = new Map<string, Database.Statement>();

  constructor(private readonly db: Database.Database) {
    this.insert = db.prepare(
      `INSERT INTO audit (${AUDIT_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  private prepared(text: string): Database.Statement {
    let stmt = this.cache.get(text);
    if (!stmt) {
      stmt = this.db.prepare(text);
      if (this.cache.size < 64) this.cache.set(text, stmt);
    }
    return stmt;
  }

  append(r: AuditAppend): number {
    const info = this.insert.run(
      r.at,
      r.surface,
      r.client,
      r.action,
      r.workflow,
      r.runKey,
      r.runId,
      r.args,
      r.argsCut ? 1 : 0,
      r.ok ? 1 : 0,
      r.errorCode,
      r.errorMessage,
    );
    return Number(info.lastInsertRowid);
  }

  list(q: AuditQuery): AuditRow[] {
    const { text, values } = auditSelect("audit", q, () => "?");
    return (this.prepared(text).all(...values) as Raw[]).map((r) => ({
      ...r,
      argsCut: r.argsCut === 1,
      ok: r.ok === 1,
    }));
  }

  count(filter: AuditFilter): number {
    const { text, values } = auditCount("audit", filter, () => "?");
    return (this.prepared(text).get(...values) as { n: number }).n;
  }
}
