// What opening a SQLite store costs before its first read: no statement is prepared up front (a resume runs
// a handful of the ~100 the store has), each is prepared on its first use and then kept; the WAL
// checkpointer's thread starts after the first commit, not at open.

import Database from "better-sqlite3";
import { expect, it, vi } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { setup, workflow } from "../../src/index.js";
import { openSqliteStore, SqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { closeLater, tempDb } from "../helpers.js";

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

it("the WAL checkpointer's thread starts after the first commit, not when the engine starts", async () => {
  const one = workflow({ run: async (ctx) => ctx.step("a", () => 1) });
  const engine = closeLater(await setup({ use: { one } }).start({ database: tempDb() }));
  const store = internals(engine).store as SqliteStore;
  expect(store.checkpointer?.running).toBe(false);
  const run = await engine.getOrCreate("one", "k");
  await waitForStatus(engine, run, ["completed"]);
  expect(store.checkpointer?.running).toBe(true);
  await engine.close();
  expect(store.checkpointer).toBeNull();
});
