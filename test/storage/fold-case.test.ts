// The SQLite search in error text's case folding (src/storage/sqlite/fold-case.ts) over every letter: one letter
// for one as lower() lowers each alone, and the trigram candidates of a folded string always hold the errors
// written in any case, whatever letters the FTS5 tokenizer folds itself (checked on the store's own run_errors).

import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { foldCase } from "../../src/storage/sqlite/fold-case.js";
import { errorMatch } from "../../src/storage/sqlite/run-queries.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { onCleanup, tempDb } from "../helpers.js";

/** Every code point foldCase changes, with what it folds to. */
function folded(): Array<[number, string]> {
  const out: Array<[number, string]> = [];
  for (let code = 0; code <= 0x10ffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const ch = String.fromCodePoint(code);
    if (foldCase(ch) !== ch) out.push([code, foldCase(ch)]);
  }
  return out;
}

describe("case folding of the search in error text on SQLite", () => {
  it("lowers each letter alone, one for one: İ is i, Σ is σ at a word's end too, ß stays", () => {
    for (const [code, lower] of folded()) expect(Array.from(lower), code.toString(16)).toHaveLength(1);
    expect(foldCase("İSTANBUL")).toBe("istanbul");
    expect(foldCase("ΟΔΟΣ ΚΛΕΙΣΤΉ")).toBe("οδοσ κλειστή");
    expect(foldCase("Straße ÄRGER École ᲨᲔ")).toBe("straße ärger école შე");
    expect(foldCase("ǅ K Å")).toBe("ǆ k å");
  });

  it("every letter that folds is found by the trigram query of what it folds to", async () => {
    const store = openSqliteStore(tempDb());
    onCleanup(() => store.close());
    const db = store.db;
    const letters = folded();
    // The store's own index of error text, written directly: rowid is the letter, thrice and inside a word.
    const add = db.prepare("INSERT INTO run_errors (rowid, message) VALUES (?, ?)");
    db.transaction(() => {
      for (const [code] of letters) {
        const ch = String.fromCodePoint(code);
        add.run(code, `${ch}${ch}${ch} k${ch}z`);
      }
    })();
    const find = db.prepare("SELECT rowid FROM run_errors WHERE run_errors MATCH ?").pluck();
    const missed: string[] = [];
    for (const [code, lower] of letters) {
      for (const needle of [lower.repeat(3), `k${lower}z`]) {
        if (!(find.all(errorMatch(needle)) as number[]).includes(code))
          missed.push(`${code.toString(16)} ${needle}`);
      }
    }
    expect(missed).toEqual([]);
    expect(letters.length).toBeGreaterThan(1400);
  });

  it("leaves the file to any SQLite: a connection without Waymark's function writes errors and searches them", async () => {
    const path = tempDb();
    openSqliteStore(path).close();
    // As the sqlite3 CLI would: the triggers that keep run_errors name no function of Waymark's.
    const db = new Database(path);
    db.prepare(`INSERT INTO runs (id, workflow, key, version, status, error, initial_state, state, created_at,
      updated_at) VALUES (1, 'wf', 'k1', 1, 'failed', ?, '{}', '{}', 1, 1)`).run(
      JSON.stringify({ name: "Error", message: "ÉCOLE fermée" }),
    );
    db.prepare("UPDATE runs SET error = ? WHERE id = 1").run(
      JSON.stringify({ name: "Error", message: "İstanbul" }),
    );
    db.close();
    const store = openSqliteStore(path);
    onCleanup(() => store.close());
    expect((await store.listRuns({ limit: 10, errorContains: "istanbul" })).map((r) => r.key)).toEqual([
      "k1",
    ]);
    expect(await store.listRuns({ limit: 10, errorContains: "école" })).toEqual([]);
  });
});
