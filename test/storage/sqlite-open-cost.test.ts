// What opening a SQLite store costs before its first read: no statement is prepared up front (a resume runs
// a handful of the ~100 the store has), each is prepared on its first use and then kept.

import Database from "better-sqlite3";
import { expect, it, vi } from "vitest";
import { openSqliteStore, SqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { tempDb } from "../helpers.js";

it("a SQLite store prepares a statement on its first use, once, and none at open", async () => {
  const file = tempDb();
  const created = openSqliteStore(file);
  await created.close();

  const db = new Database(file);
  const prepare = vi.spyOn(db, "prepare");
  const store = new SqliteStore(db, file);
  try {
    expect(prepare).not.toHaveBeenCalled();
    expect(await store.getRun(1)).toBeUndefined();
    expect(prepare).toHaveBeenCalledTimes(1);
    expect(await store.getRun(2)).toBeUndefined();
    expect(await store.getRuns([1, 2])).toEqual([]);
    expect(prepare).toHaveBeenCalledTimes(1);
    expect(await store.schedules()).toEqual([]);
    expect(await store.schedules()).toEqual([]);
    expect(prepare).toHaveBeenCalledTimes(2);
  } finally {
    await store.close();
  }
});
