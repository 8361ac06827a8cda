// Case folding of the search in error text as PostgreSQL's lower() does it (under C.UTF-8: each letter lowered
// alone, one letter for one), where SQLite's lower() folds A-Z only. A function of the connection, used only in
// queries: no trigger, index or view names it, so any SQLite still reads the file.

import type Database from "better-sqlite3";

/** The SQL function: waymark_contains(text, needle) is 1 when foldCase(text) holds foldCase(needle). */
export const FOLDED_CONTAINS = "waymark_contains";

/**
 * A search string of 1 or 2 letters once folded (foldCase: one letter for one), which has no trigram of its own:
 * both stores read its candidates from an index of such strings (SQLite short-search.ts, PostgreSQL migration 17).
 */
export function isShortNeedle(needle: string | undefined): boolean {
  if (!needle) return false;
  const n = Array.from(foldCase(needle)).length;
  return n > 0 && n < 3;
}

/**
 * `s` with each letter lowered alone (Unicode's simple lowercase, as towlower): toLowerCase but for the two
 * letters it lowers otherwise, İ (to i and a combining dot) and Σ (to ς at a word's end).
 */
export function foldCase(s: string): string {
  return (SPECIAL.test(s) ? s.replace(/\u0130/g, "i").replace(/\u03a3/g, "\u03c3") : s).toLowerCase();
}

const SPECIAL = /[\u0130\u03a3]/;

/** Registers FOLDED_CONTAINS on `db` (once per connection, before its first search in error text). */
export function registerFoldCase(db: Database.Database): void {
  // A query binds one needle: it is folded once, not once a row.
  let needle: string | undefined;
  let folded = "";
  db.function(FOLDED_CONTAINS, { deterministic: true }, (text: unknown, find: unknown) => {
    if (typeof text !== "string" || typeof find !== "string") return null;
    if (find !== needle) {
      needle = find;
      folded = foldCase(find);
    }
    return foldCase(text).includes(folded) ? 1 : 0;
  });
}

/**
 * The letters other than A-Z that fold to `ch` (É for é, İ for i, the Kelvin sign for k), for trigram queries:
 * the FTS5 tokenizer folds A-Z and some others but not all (İ, Georgian Mtavruli, Cherokee, Adlam...).
 */
export function unfoldedForms(ch: string): readonly string[] {
  forms ??= buildForms();
  return forms.get(ch) ?? NONE;
}

const NONE: readonly string[] = [];
let forms: Map<string, string[]> | undefined;

/** Every letter foldCase changes, by what it folds to: planes 0 and 1 (no later plane has case), 12 ms once. */
function buildForms(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (let code = 0x80; code <= 0x1ffff; code++) {
    if (code >= 0xd800 && code <= 0xdfff) continue;
    const ch = String.fromCodePoint(code);
    const lower = foldCase(ch);
    if (lower === ch) continue;
    const list = out.get(lower);
    if (list) list.push(ch);
    else out.set(lower, [ch]);
  }
  return out;
}
