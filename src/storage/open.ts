// Chooses a store from a database string: a SQLite file path (default), ":memory:", or a Store itself.

import { InvalidInputError } from "../errors.js";
import { type Durability, openSqliteStore } from "./sqlite/sqlite-store.js";
import type { Store } from "./store.js";

export interface OpenOptions {
  durability?: Durability;
  busyTimeoutMs?: number;
}

/** The default database file, relative to the working directory. */
export const DEFAULT_DATABASE = "./waymark.db";

export async function openStore(
  database: string | Store | undefined,
  options: OpenOptions = {},
): Promise<Store> {
  if (database !== undefined && typeof database === "object") return database;
  const target = database ?? DEFAULT_DATABASE;
  if (typeof target !== "string" || target.length === 0) {
    throw new InvalidInputError(
      `Invalid database ${JSON.stringify(database)}: pass a SQLite file path (default "${DEFAULT_DATABASE}") or ":memory:".`,
    );
  }
  if (/^postgres(ql)?:\/\//.test(target)) {
    throw new InvalidInputError(
      "PostgreSQL databases are not supported by this build yet; use a SQLite file path.",
    );
  }
  return openSqliteStore(target, options);
}
