// A search in error text of 1 or 2 characters, which has no trigram of its own, through run_errors' terms.
// Every message is indexed with INDEX_END after it (migration 17), so each place such a string occurs in a
// message begins a trigram (at the message's end and in a message of 1 or 2 letters too): the messages that
// hold it are among those that hold a trigram beginning with it, a range of the index's terms (fts5vocab),
// none or a few when few errors hold it. A common string begins many; the walk of the newest errors meets it.

import Database from "better-sqlite3";
import { foldCase, unfoldedForms } from "./fold-case.js";

/** What migration 17 appends to each message run_errors indexes: two U+E000 (a private-use letter). */
export const INDEX_END = "\ue000\ue000";

/** More terms than this begin the string: its search reads the runs with an error instead (it is common). */
export const SHORT_TERMS = 64;

/**
 * The FTS5 query of every term of run_errors that begins with `needle` (1 or 2 characters) as any of its
 * letters' forms is indexed, ORed: '""' (no row) when there is none, null when more than SHORT_TERMS.
 * Every error whose message holds `needle` as foldCase folds it matches; the plans check the string itself.
 */
export function shortErrorMatch(db: Database.Database, needle: string): string | null {
  const terms = termsStatement(db);
  const found: string[] = [];
  for (const prefix of indexedForms(needle)) {
    // Terms are compared as UTF-8 bytes, the order of code points: a trigram beginning with `prefix` sorts
    // between it and it followed by the last code point twice.
    const rows = terms.all(
      prefix,
      `${prefix}\u{10ffff}\u{10ffff}`,
      SHORT_TERMS + 1 - found.length,
    ) as string[];
    found.push(...rows);
    if (found.length > SHORT_TERMS) return null;
  }
  return found.length === 0 ? '""' : found.map((t) => `"${t.replaceAll('"', '""')}"`).join(" OR ");
}

/** The range read of the terms, on a vocabulary table of the connection's temp schema (made once). */
function termsStatement(db: Database.Database): Database.Statement {
  let s = statements.get(db);
  if (!s) {
    db.exec("CREATE VIRTUAL TABLE IF NOT EXISTS temp.run_error_terms USING fts5vocab(main, run_errors, row)");
    s = db.prepare("SELECT term FROM temp.run_error_terms WHERE term >= ? AND term <= ? LIMIT ?").pluck();
    statements.set(db, s);
  }
  return s;
}

const statements = new WeakMap<Database.Database, Database.Statement>();

/**
 * Each way the index may hold `needle`'s letters: every letter that folds to each (unfoldedForms) as the
 * tokenizer folds it, which is not foldCase (it folds ς to σ, ſ to s, µ to μ and leaves İ), so it is asked.
 */
function indexedForms(needle: string): string[] {
  let ways = [""];
  for (const ch of foldCase(needle)) {
    const forms = new Set([ch, ...unfoldedForms(ch)].map(tokenizerFold));
    ways = ways.flatMap((w) => [...forms].map((f) => w + f));
  }
  return ways;
}

/** `ch` as the FTS5 trigram tokenizer folds it, read from a one-row index in memory (once a letter). */
function tokenizerFold(ch: string): string {
  let folded = folds.get(ch);
  if (folded === undefined) {
    probe ??= openProbe();
    probe.write.run(ch + INDEX_END);
    folded = Array.from(probe.read.get() as string)[0] ?? ch;
    probe.clear.run();
    folds.set(ch, folded);
  }
  return folded;
}

const folds = new Map<string, string>();
let probe: { write: Database.Statement; read: Database.Statement; clear: Database.Statement } | undefined;

function openProbe(): NonNullable<typeof probe> {
  const db = new Database(":memory:");
  db.exec(`CREATE VIRTUAL TABLE f USING fts5(t, tokenize = 'trigram', detail = none);
    CREATE VIRTUAL TABLE v USING fts5vocab(f, row)`);
  return {
    write: db.prepare("INSERT INTO f (rowid, t) VALUES (1, ?)"),
    // The letter and INDEX_END are one trigram, the table's only term.
    read: db.prepare("SELECT term FROM v").pluck(),
    clear: db.prepare("DELETE FROM f"),
  };
}
