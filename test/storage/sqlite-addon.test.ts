// The SQLite store opens with better-sqlite3's addon named directly, not found by the `bindings` search.

import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { sqliteAddon } from "../../src/storage/sqlite/addon.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { tempDb } from "../helpers.js";

describe("SQLite addon", () => {
  it("is the package's compiled addon, and a store opened with it (and its checkpointer) works", async () => {
    const file = sqliteAddon();
    expect(file).toMatch(/better-sqlite3[/\\]build[/\\]Release[/\\]better_sqlite3\.node$/);
    expect(fs.existsSync(file!)).toBe(true);
    const store = openSqliteStore(tempDb(), { backgroundCheckpoints: true });
    expect(await store.countRuns()).toEqual([]);
    await store.close();
  });
});
