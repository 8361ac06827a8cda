// The stores every conformance test runs against: a SQLite file in a temp dir, a PostgreSQL schema of its own.

import Database from "better-sqlite3";
import { MIGRATIONS as PG_MIGRATIONS } from "../../src/storage/postgres/migrations.js";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { MIGRATIONS as SQLITE_MIGRATIONS } from "../../src/storage/sqlite/migrations.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { emptyBatch, type Store, type WriteBatch } from "../../src/storage/store.js";
import { onCleanup, tempDb } from "../helpers.js";
import { sql, tempSchema } from "../postgres/pg.js";

/** One fresh database; `open()` opens another store on it (as another process would), closed after the test. */
export interface Fresh {
  open(): Promise<Store>;
  /** Makes the database look written by a newer Waymark. */
  forgeNewerSchema(version: number): Promise<void>;
  /** Puts a table of some other application where Waymark's would go (before any store opened it). */
  addForeignTable(): Promise<void>;
  /**
   * Creates the database as an older Waymark left it: the first `version` migrations only, then `rows`
   * inserted as they are (table name to rows of column values), before any store opened it.
   */
  atVersion(version: number, rows: Record<string, Array<Record<string, unknown>>>): Promise<void>;
  /** Runs one SQL statement on the database directly (`{t}` stands for the schema's table prefix). */
  raw(statement: string): Promise<void>;
  /** Reads rows with one SQL statement on the database directly (`{t}` as in `raw`). */
  query(statement: string): Promise<Array<Record<string, unknown>>>;
}

export interface Backend {
  name: "sqlite" | "postgres";
  fresh(): Promise<Fresh>;
}

function closing(store: Store): Store {
  onCleanup(() => store.close());
  return store;
}

export const sqlite: Backend = {
  name: "sqlite",
  async fresh() {
    const path = tempDb();
    return {
      open: async () => closing(openSqliteStore(path)),
      async forgeNewerSchema(version) {
        const db = new Database(path);
        db.pragma(`user_version = ${version}`);
        db.close();
      },
      async addForeignTable() {
        const db = new Database(path);
        db.exec("CREATE TABLE invoices (id INTEGER PRIMARY KEY, total REAL)");
        db.close();
      },
      async atVersion(version, rows) {
        const db = new Database(path);
        for (const m of SQLITE_MIGRATIONS.slice(0, version)) db.exec(m);
        db.pragma(`user_version = ${version}`);
        for (const [table, list] of Object.entries(rows)) {
          for (const row of list) {
            const cols = Object.keys(row);
            db.prepare(
              `INSERT INTO ${table} (${cols.join(", ")}) VALUES (${cols.map(() => "?").join(", ")})`,
            ).run(...Object.values(row));
          }
        }
        db.close();
      },
      async raw(statement) {
        const db = new Database(path);
        try {
          db.exec(statement.replaceAll("{t}", ""));
        } finally {
          db.close();
        }
      },
      async query(statement) {
        const db = new Database(path, { readonly: true });
        try {
          return db.prepare(statement.replaceAll("{t}", "")).all() as Array<Record<string, unknown>>;
        } finally {
          db.close();
        }
      },
    };
  },
};

export const postgres: Backend = {
  name: "postgres",
  async fresh() {
    const { schema, url } = await tempSchema();
    return {
      open: async () => closing(await openPostgresStore(url)),
      async forgeNewerSchema(version) {
        await sql(`UPDATE "${schema}".waymark_schema SET version = $1`, [version]);
      },
      async addForeignTable() {
        await sql(`CREATE SCHEMA "${schema}"`);
        await sql(`CREATE TABLE "${schema}".invoices (id BIGINT PRIMARY KEY, total NUMERIC)`);
      },
      async atVersion(version, rows) {
        const s = `"${schema}"`;
        await sql(`CREATE SCHEMA ${s}`);
        await sql(`CREATE TABLE ${s}.waymark_schema (version INTEGER NOT NULL)`);
        await sql(`INSERT INTO ${s}.waymark_schema (version) VALUES ($1)`, [version]);
        for (const m of PG_MIGRATIONS.slice(0, version)) await sql(m(s));
        for (const [table, list] of Object.entries(rows)) {
          for (const row of list) {
            const cols = Object.keys(row);
            await sql(
              `INSERT INTO ${s}.${table} (${cols.join(", ")}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(", ")})`,
              Object.values(row),
            );
          }
        }
        // Ids given explicitly leave the sequences behind; move them past what was inserted.
        for (const table of Object.keys(rows)) {
          if (table === "entries") continue;
          await sql(
            `SELECT setval('${s}.${table}_id_seq', (SELECT coalesce(max(id), 0) + 1 FROM ${s}.${table}), false)`,
          );
        }
      },
      async raw(statement) {
        await sql(statement.replaceAll("{t}", `"${schema}".`));
      },
      async query(statement) {
        return sql(statement.replaceAll("{t}", `"${schema}".`));
      },
    };
  },
};

export const BACKENDS: Backend[] = [sqlite, postgres];

/** An empty batch with `now`, to fill in. */
export function batch(now: number, parts: Partial<WriteBatch> = {}): WriteBatch {
  return { ...emptyBatch(now), ...parts };
}
