// The stores every conformance test runs against: a SQLite file in a temp dir, a PostgreSQL schema of its own.

import Database from "better-sqlite3";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { Store, WriteBatch } from "../../src/storage/store.js";
import { onCleanup, tempDb } from "../helpers.js";
import { sql, tempSchema } from "../postgres/pg.js";

/** One fresh database; `open()` opens another store on it (as another process would), closed after the test. */
export interface Fresh {
  open(): Promise<Store>;
  /** Makes the database look written by a newer Waymark. */
  forgeNewerSchema(version: number): Promise<void>;
  /** Puts a table of some other application where Waymark's would go (before any store opened it). */
  addForeignTable(): Promise<void>;
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
    };
  },
};

export const BACKENDS: Backend[] = [sqlite, postgres];

/** An empty batch with `now`, to fill in. */
export function batch(now: number, parts: Partial<WriteBatch> = {}): WriteBatch {
  return {
    now,
    creates: [],
    messages: [],
    entries: [],
    deleteEntries: [],
    truncateEntries: [],
    consume: [],
    unconsume: [],
    runs: [],
    requestsDone: [],
    requests: [],
    rejections: [],
    leases: [],
    ...parts,
  };
}
