// Store conformance, the search in error text folds case beyond A-Z: both stores lower each letter alone as
// PostgreSQL's lower() does under C.UTF-8 (É is é, Ä is ä, Σ is σ even at a word's end, İ is i, Georgian
// Mtavruli is Mkhedruli), never to more letters (ß stays ß, so STRASSE does not find Straße). On SQLite every
// plan (the trigram candidates few or many, the newest errors first, the scan of 1 and 2 characters) finds
// the same runs, including those whose letters the FTS5 trigram tokenizer does not fold (İ, Mtavruli).
// Keys are matched case-sensitively on both.

import { describe, expect, it } from "vitest";
import { errorSearch, readRuns, runsQuery } from "../../src/storage/sqlite/run-queries.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { RunQuery, RunRow, Store } from "../../src/storage/store.js";
import { onCleanup, tempDb } from "../helpers.js";
import { BACKENDS } from "./backends.js";
import { allPages, failedRuns } from "./fixtures.js";

/** Creates one run per [key, message] (created 1 ms apart, in order) and fails each with that message. */
function failedWith(store: Store, messages: Array<[string, string]>): Promise<RunRow[]> {
  return failedRuns(
    store,
    messages.map(([key, message]) => [key, JSON.stringify({ name: "Error", message })]),
  );
}

const MESSAGES: Array<[string, string]> = [
  ["ecole", "L'école est fermée"],
  ["ECOLE", "L'ÉCOLE EST FERMÉE"],
  ["arger", "ärger im Büro"],
  ["ARGER", "ÄRGER mit der Straße"],
  ["greek", "ΟΔΟΣ κλειστή"],
  ["istanbul", "İstanbul şubesi kapalı"],
  ["georgian", "ᲨᲔᲪᲓᲝᲛᲐ"],
  ["percent", "fermée à 100%"],
  ["decoyPercent", "fermée à 1000"],
  ["underscore", "ÄRGER_ID fehlt"],
  ["decoyUnderscore", "ÄRGERXID fehlt"],
  ["backslash", "C:\\École introuvable"],
  ["decoyBackslash", "C:École introuvable"],
  ["ascii", "Carrier TIMEOUT"],
];

/**
 * 900 runs' messages: a third "ÄRGER" throughout (dense: the newest errors fill a page), a third İstanbul with
 * ΟΔΟΣ in the oldest 400 only (on SQLite many candidates and none among the newest errors: the walk), and a
 * third Georgian in the oldest 400 (few candidates), École after.
 */
const LAYERED = Array.from({ length: 900 }, (_, i): [string, string] => [
  `r${String(i).padStart(3, "0")}`,
  i % 3 === 0
    ? `ÄRGER mit der Straße ${i}`
    : i % 3 === 1
      ? i < 400
        ? `İSTANBUL şubesi ΟΔΟΣ ${i}`
        : `istanbul şubesi ${i}`
      : i < 400
        ? `ᲨᲔᲪᲓᲝᲛᲐ ΟΔΟΣ ${i}`
        : `École fermée à 100% ${i}`,
]);

/** The needles of LAYERED, each with the runs (by index) whose message holds it as lower() folds. */
const NEEDLES: Array<[string, (i: number) => boolean]> = [
  ["ärger", (i) => i % 3 === 0],
  ["ÄRGER MIT", (i) => i % 3 === 0],
  ["STRAßE", (i) => i % 3 === 0],
  ["ß", (i) => i % 3 === 0],
  ["STRASSE", () => false],
  ["istanbul", (i) => i % 3 === 1],
  ["İstanbul Ş", (i) => i % 3 === 1],
  ["ISTANBUL", (i) => i % 3 === 1],
  ["οδοσ", (i) => i % 3 !== 0 && i < 400],
  ["ΟΔΟΣ", (i) => i % 3 !== 0 && i < 400],
  ["οδος", () => false],
  ["Σ", (i) => i % 3 !== 0 && i < 400],
  ["შეცდომა", (i) => i % 3 === 2 && i < 400],
  ["ᲨᲔ", (i) => i % 3 === 2 && i < 400],
  ["école fermée", (i) => i % 3 === 2 && i >= 400],
  ["ÉC", (i) => i % 3 === 2 && i >= 400],
  ["À 100% 8", (i) => i % 3 === 2 && i >= 800],
];

describe.each(BACKENDS)("$name store: search in error text folds case beyond A-Z", (backend) => {
  it("finds é by É, ä by Ä, σ by Σ, i by İ and Mtavruli by Mkhedruli, as lower() does, and no more", async () => {
    const store = await (await backend.fresh()).open();
    await failedWith(store, MESSAGES);
    const find = async (errorContains: string) =>
      (await store.listRuns({ limit: 100, errorContains })).map((r) => r.key).sort();
    expect(await find("école")).toEqual(["ECOLE", "backslash", "decoyBackslash", "ecole"]);
    expect(await find("ÉCOLE EST")).toEqual(["ECOLE", "ecole"]);
    expect(await find("L'École est FERMÉE")).toEqual(["ECOLE", "ecole"]);
    expect(await find("ärger")).toEqual(["ARGER", "arger", "decoyUnderscore", "underscore"]);
    expect(await find("ÄRGER IM")).toEqual(["arger"]);
    expect(await find("Büro")).toEqual(["arger"]);
    expect(await find("BÜRO")).toEqual(["arger"]);
    expect(await find("straße")).toEqual(["ARGER"]);
    expect(await find("STRASSE")).toEqual([]); // ß is not SS to lower()
    expect(await find("οδοσ")).toEqual(["greek"]);
    expect(await find("ΟδΟΣ ΚΛΕΙΣΤΉ")).toEqual(["greek"]);
    expect(await find("οδος")).toEqual([]); // Σ lowers to σ, never to the final ς
    expect(await find("istanbul")).toEqual(["istanbul"]);
    expect(await find("İSTANBUL")).toEqual(["istanbul"]);
    expect(await find("ŞUBESİ")).toEqual(["istanbul"]);
    expect(await find("შეცდომა")).toEqual(["georgian"]);
    expect(await find("ᲨᲔᲪ")).toEqual(["georgian"]);
    // 1 and 2 characters (no trigram: every error read).
    expect(await find("É")).toEqual([
      "ECOLE",
      "backslash",
      "decoyBackslash",
      "decoyPercent",
      "ecole",
      "percent",
    ]);
    expect(await find("ÉC")).toEqual(["ECOLE", "backslash", "decoyBackslash", "ecole"]);
    expect(await find("Σ")).toEqual(["greek"]);
    expect(await find("σ")).toEqual(["greek"]);
    expect(await find("ς")).toEqual([]);
    expect(await find("Ür")).toEqual(["arger"]);
    expect(await find("ß")).toEqual(["ARGER"]);
    expect(await find("ᲨᲔ")).toEqual(["georgian"]);
    expect(await find("შ")).toEqual(["georgian"]);
    // İ lowers to i: it finds every i (and I), as on PostgreSQL.
    expect(await find("İ")).toEqual([
      "ARGER",
      "arger",
      "ascii",
      "backslash",
      "decoyBackslash",
      "decoyUnderscore",
      "istanbul",
      "underscore",
    ]);
    // %, _ and \ literally, beside letters that fold.
    expect(await find("À 100%")).toEqual(["percent"]);
    expect(await find("%")).toEqual(["percent"]);
    expect(await find("ärger_id")).toEqual(["underscore"]);
    expect(await find("R_")).toEqual(["underscore"]);
    expect(await find("c:\\école")).toEqual(["backslash"]);
    expect(await find("\\É")).toEqual(["backslash"]);
    // ASCII as before.
    expect(await find("carrier timeout")).toEqual(["ascii"]);
    expect(await find("Ti")).toEqual(["ascii"]);
    expect(await find("no run has this")).toEqual([]);
  });

  it("pages with the cursor through many runs that hold a folded string, old and new, dense and sparse", async () => {
    const store = await (await backend.fresh()).open();
    const messages = LAYERED;
    await failedWith(store, messages);
    const expected = (holds: (i: number) => boolean) =>
      messages
        .map(([key], i) => ({ key, i }))
        .filter(({ i }) => holds(i))
        .map(({ key }) => key)
        .reverse();
    for (const [needle, holds] of NEEDLES) {
      for (const limit of [7, 60, 1000]) {
        expect(await allPages(store, { errorContains: needle, limit }), `${needle} ${limit}`).toEqual(
          expected(holds),
        );
      }
    }
  });

  it("matches keys case-sensitively (keyContains), beyond A-Z too", async () => {
    const store = await (await backend.fresh()).open();
    await failedWith(store, [
      ["école-1", "x"],
      ["ÉCOLE-2", "x"],
      ["Order-3", "x"],
    ]);
    const find = async (keyContains: string) =>
      (await store.listRuns({ limit: 100, keyContains })).map((r) => r.key).sort();
    expect(await find("école")).toEqual(["école-1"]);
    expect(await find("ÉCOLE")).toEqual(["ÉCOLE-2"]);
    expect(await find("É")).toEqual(["ÉCOLE-2"]);
    expect(await find("order")).toEqual([]);
    expect(await find("Order")).toEqual(["Order-3"]);
  });
});

describe("on SQLite every plan of a search in error text folds case as lower() does", () => {
  it("few, many, the newest errors first and scan find the same runs for strings beyond A-Z", async () => {
    const store = openSqliteStore(tempDb());
    onCleanup(() => store.close());
    const messages = LAYERED;
    const runs = await failedWith(store, messages);
    const db = store.db;
    const plans = new Set<string>();
    const middle = runs[450]!;
    for (const [needle, holds] of NEEDLES) {
      for (const limit of [5, 50, 1000]) {
        for (const before of [undefined, { createdAt: middle.createdAt, id: middle.id }]) {
          const q: RunQuery = { errorContains: needle, limit, ...(before ? { before } : {}) };
          const expected = messages
            .map(([key], i) => ({ key, i }))
            .filter(({ i }) => holds(i) && (!before || i < 450))
            .map(({ key }) => key)
            .reverse()
            .slice(0, limit);
          const search = errorSearch(db, q);
          plans.add(search.plan);
          expect(
            readRuns(db, q).map((r) => r.key),
            `${needle} ${limit}`,
          ).toEqual(expected);
          for (const plan of ["scan", "few", "many"] as const) {
            const { sql, args } = runsQuery(q, plan, undefined, search.match);
            const keys = (db.prepare(sql).all(...args) as RunRow[]).map((r) => r.key);
            expect(keys, `${needle} ${limit} ${plan}`).toEqual(expected);
          }
        }
      }
    }
    expect([...plans].sort()).toEqual(["few", "many"]);
  });
});
