// Opening an existing database writes nothing: a resume's start pays for no write transaction, and other
// processes' change watchers (PRAGMA data_version) see no change from it.

import fs from "node:fs";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { onCleanup, tempDb } from "../helpers.js";

it("an open of an existing incremental-vacuum file leaves its WAL empty and data_version unchanged", () => {
  const file = tempDb();
  const first = openSqliteStore(file);
  expect(first.db.pragma("auto_vacuum", { simple: true })).toBe(2);
  first.db.close();

  const watcher = new Database(file);
  onCleanup(() => {
    watcher.close();
  });
  const before = watcher.pragma("data_version", { simple: true });
  const store = openSqliteStore(file, { backgroundCheckpoints: true });
  onCleanup(() => {
    store.db.close();
  });
  expect(fs.statSync(`${file}-wal`).size).toBe(0);
  expect(watcher.pragma("data_version", { simple: true })).toBe(before);
  expect(store.db.pragma("auto_vacuum", { simple: true })).toBe(2);
});
