// Chooses a store from a database string: a PostgreSQL URL, a SQLite file path (default), ":memory:", or a Store itself.

import { InvalidInputError } from "../errors.js";
import type { Durability } from "./durability.js";
import { isPostgresUrl } from "./postgres/url.js";
import { openSqliteStore } from "./sqlite/sqlite-store.js";
import type { Store } from "./store.js";

export interface OpenOptions {
  /** SQLite only. */
  durability?: Durability;
  /** SQLite only. */
  busyTimeoutMs?: number;
  /** SQLite only: checkpoint the WAL on a worker thread (for processes that execute runs). */
  backgroundCheckpoints?: boolean;
  /** SQLite only: open read-only; a missing file is an error instead of a new database. */
  readonly?: boolean;
}

/** The default database file, relative to the working directory. */
export const DEFAULT_DATABASE = "./waymark.db";

/**
 * Opens a store: `postgres://user:password@host:5432/database?schema=name` (or `postgresql://`) for
 * PostgreSQL, shared by several engine processes; anything else is a SQLite file path.
 */
export async function openStore(
  database: string | Store | undefined,
  options: OpenOptions = {},
): Promise<Store> {
  if (database !== undefined && typeof database === "object") return database;
  const target = database ?? DEFAULT_DATABASE;
  if (typeof target !== "string" || target.length === 0) {
    throw new InvalidInputError(
      `Invalid database ${JSON.stringify(database)}: pass a SQLite file path (default "${DEFAULT_DATABASE}"), ":memory:", or a PostgreSQL URL (postgres://user:password@host:5432/database).`,
    );
  }
  // node-postgres is loaded for a PostgreSQL URL only (a SQLite process never needs it).
  if (isPostgresUrl(target)) return (await import("./postgres/postgres-store.js")).openPostgresStore(target);
  // "pg://", "mysql://", "file://": a URL this does not open, not a file of that name.
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(target)?.[1];
  if (scheme) {
    throw new InvalidInputError(
      `Unsupported database URL scheme "${scheme}:" in ${JSON.stringify(target)}: use postgres://user:password@host:5432/database for PostgreSQL, or a SQLite file path.`,
    );
  }
  return openSqliteStore(target, options);
}
