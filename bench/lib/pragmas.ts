// Waymark's SQLite pragmas, read from a store Waymark opens itself, so the floor and Rivet's SQLite driver
// always run with the same settings as the engine they are compared with (whatever the engine sets today).

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import type Database from "better-sqlite3";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { Durability } from "./common.js";

const NAMES = ["busy_timeout", "journal_mode", "synchronous", "temp_store", "cache_size"] as const;

let cached: Map<Durability, Array<[string, string | number]>> | null = null;

/** The values of Waymark's connection pragmas under a durability setting (read once per process). */
export function waymarkPragmas(durability: Durability): Array<[string, string | number]> {
  cached ??= new Map();
  const known = cached.get(durability);
  if (known) return known;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-pragmas-"));
  const store = openSqliteStore(path.join(dir, "p.db"), { durability });
  const values = NAMES.map(
    (name) => [name, store.db.pragma(name, { simple: true }) as string | number] as [string, string | number],
  );
  store.db.close();
  fs.rmSync(dir, { recursive: true, force: true });
  cached.set(durability, values);
  return values;
}

/** Sets Waymark's pragmas for `durability` on a connection, in the order Waymark sets them. */
export function useWaymarkPragmas(db: Database.Database, durability: Durability): void {
  for (const [name, value] of waymarkPragmas(durability)) db.pragma(`${name} = ${value}`);
}
