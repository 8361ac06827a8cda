// Store conformance, the search in error text of 1 or 2 characters (no trigram of its own): both stores answer
// what a plain substring filter over foldCase'd messages answers, for every string of 1 or 2 characters the
// messages hold and some they do not, in any case, beyond A-Z (é/É, ß, Σ/σ/ς, İ), %, _ and \ literally,
// messages of 1 or 2 characters and strings at a message's end too, page by page. On SQLite the runs_errors
// terms that begin the string are the candidates (few, many, or too many terms: the scan), every plan answers
// as the scan does, and a string few errors hold reads few errors' text, not every run's with an error. On
// PostgreSQL the grams index (migration 17) counts and fetches the few, also where the plan runs in workers.

import pg from "pg";
import { describe, expect, it } from "vitest";
import { clientConfig, parsePostgresUrl } from "../../src/storage/postgres/connect.js";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { errorProbe, runsQuery as pgRunsQuery } from "../../src/storage/postgres/run-queries.js";
import { tables } from "../../src/storage/postgres/sql.js";
import { FOLDED_CONTAINS, foldCase } from "../../src/storage/sqlite/fold-case.js";
import { errorSearch, NEWEST_ERRORS, readRuns } from "../../src/storage/sqlite/run-queries.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { RunQuery, RunRow, Store } from "../../src/storage/store.js";
import { onCleanup, tempDb } from "../helpers.js";
import { sql, tempSchema } from "../postgres/pg.js";
import { BACKENDS, batch } from "./backends.js";
import { allPages, expectPlansAgree, failedRuns, T0 } from "./fixtures.js";

/** Messages a few runs hold (among the oldest), short ones and ones whose string is at the end. */
const RARE = [
  "x",
  "é",
  "É",
  "ß",
  "Σ",
  "ς",
  "İ",
  "%",
  "_",
  "\\",
  "ab",
  "Zq",
  "ΟΔΟΣ",
  "λόγος",
  "İstanbul",
  "STRAßE",
  "fermée à 100%",
  "a_b",
  "C:\\",
  "end é",
  "fin É",
  "ЖЁЛТЫЙ",
  "ᲨᲔ",
  '"q"',
];

/** The common messages (every run not rare): ASCII without x, z, q, 4 or 2. */
const COMMON = ["card declined for customer c1", "stock missing (SKU 7)", "Carrier TIMEOUT after 30 s"];

/** Run i's message: RARE ones at 40 places among the 700 runs' oldest 300, a COMMON one elsewhere. */
function messages(n: number): string[] {
  return Array.from({ length: n }, (_, i) =>
    i % 7 === 3 && i < 300 ? RARE[Math.floor(i / 7) % RARE.length]! : COMMON[i % COMMON.length]!,
  );
}

function failedWith(store: Store, texts: string[]): Promise<RunRow[]> {
  return failedRuns(
    store,
    texts.map((message, i) => [`r${String(i).padStart(3, "0")}`, JSON.stringify({ name: "Error", message })]),
  );
}

/** Every string of 1 or 2 characters the texts hold, as written and in upper and lower case, and some absent. */
function shortNeedles(texts: string[]): string[] {
  const out = new Set(["zq", "ZQ", "42", "4", "q", "É2", "\u{10ffff}", "\ue000"]);
  for (const text of new Set(texts)) {
    const chars = Array.from(text);
    for (let i = 0; i < chars.length; i++) {
      for (const s of [chars[i]!, chars.slice(i, i + 2).join("")]) {
        out.add(s);
        out.add(s.toUpperCase());
        out.add(s.toLowerCase());
      }
    }
  }
  return [...out].filter((s) => Array.from(foldCase(s)).length <= 2);
}

/** The keys whose message holds `needle` as foldCase folds both, newest first. */
function plainFilter(texts: string[], needle: string): string[] {
  const folded = foldCase(needle);
  return texts
    .map((t, i) => ({ key: `r${String(i).padStart(3, "0")}`, hit: foldCase(t).includes(folded) }))
    .filter((r) => r.hit)
    .map((r) => r.key)
    .reverse();
}

describe.each(BACKENDS)("$name store: search in error text of 1 or 2 characters", (backend) => {
  it("answers as a plain substring filter does, for every string of 1 or 2 characters, page by page", async () => {
    const store = await (await backend.fresh()).open();
    const texts = messages(700);
    await failedWith(store, texts);
    for (const needle of shortNeedles(texts)) {
      const expected = plainFilter(texts, needle);
      const first = (await store.listRuns({ errorContains: needle, limit: 50 })).map((r) => r.key);
      expect(first, JSON.stringify(needle)).toEqual(expected.slice(0, 50));
      if (expected.length <= 60)
        expect(await allPages(store, { errorContains: needle, limit: 7 }), JSON.stringify(needle)).toEqual(
          expected,
        );
    }
  });

  it("finds a string of 1 or 2 characters in errors written, changed and cleared after the index was made", async () => {
    const store = await (await backend.fresh()).open();
    const [a, b] = await failedWith(store, ["Zq", "nothing here"]);
    const keys = async (errorContains: string) =>
      (await store.listRuns({ errorContains, limit: 10 })).map((r) => r.key);
    expect(await keys("zq")).toEqual(["r000"]);
    expect(await keys("q")).toEqual(["r000"]);
    expect(await keys("e")).toEqual(["r001"]);
    await store.commit(
      batch(T0 + 20_000, {
        runs: [
          { id: a!.id, status: "pending", error: null, failureSignature: null, finishedAt: null },
          { id: b!.id, error: JSON.stringify({ name: "Error", message: "é" }) },
        ],
      }),
    );
    expect(await keys("zq")).toEqual([]);
    expect(await keys("É")).toEqual(["r001"]);
    expect(await keys("e")).toEqual([]);
  });
});

describe("on SQLite a search of 1 or 2 characters reads its candidates from the index's terms", () => {
  it("few, many and the scan (too many terms) answer as the scan does, cursor or not", async () => {
    const store = openSqliteStore(tempDb());
    onCleanup(() => store.close());
    // 900 runs: the 700 above, then 200 of "a" followed by one of 80 CJK letters (no case): "a" begins more
    // terms than SHORT_TERMS (the scan), "ab" few, "c" and "r" many.
    const texts = [
      ...messages(700),
      ...Array.from({ length: 200 }, (_, i) => `a${String.fromCodePoint(0x4e00 + (i % 80))}`),
    ];
    const runs = await failedWith(store, texts);
    expect(NEWEST_ERRORS).toBeLessThan(runs.length);
    const db = store.db;
    const plans = new Set<string>();
    const middle = runs[450]!;
    for (const needle of [...shortNeedles(messages(700)), "a", "A\u4e00", "\u4e01"]) {
      for (const [limit, before] of [
        [5, undefined],
        [5, { createdAt: middle.createdAt, id: middle.id }],
        [1000, undefined],
      ] as const) {
        expectPlansAgree(db, { errorContains: needle, limit, ...(before ? { before } : {}) }, plans);
      }
    }
    expect(errorSearch(db, { errorContains: "a", limit: 50 }).plan).toBe("scan");
    expect([...plans].sort()).toEqual(["few", "many", "scan"]);
  });

  it("reads the text of few errors for a string few or none hold, not every run's with an error", async () => {
    const store = openSqliteStore(tempDb());
    onCleanup(() => store.close());
    const texts = Array.from({ length: 3000 }, (_, i) =>
      i % 1000 === 7 ? "zq at the end: 42" : COMMON[i % 3]!,
    );
    await failedWith(store, texts);
    const db = store.db;
    let read = 0;
    db.function(FOLDED_CONTAINS, { deterministic: true }, (text: unknown, find: unknown) => {
      read++;
      return foldCase(String(text)).includes(foldCase(String(find))) ? 1 : 0;
    });
    const count = (errorContains: string) => {
      read = 0;
      const keys = readRuns(db, { errorContains, limit: 50 }).map((r) => r.key);
      return { keys, read };
    };
    // The newest errors first (a common string fills its page there), then the candidates alone.
    for (const needle of ["ZQ", "42", "Q", ":"])
      expect(count(needle)).toEqual({ keys: ["r2007", "r1007", "r007"], read: NEWEST_ERRORS + 3 });
    for (const needle of ["zz", "é", "4x", "%"])
      expect(count(needle)).toEqual({ keys: [], read: NEWEST_ERRORS });
  });
});

describe("on PostgreSQL a search of 1 or 2 characters reads its candidates from the grams index", () => {
  it("indexes every string of 1 and 2 characters of a message, lowered, each once", async () => {
    const { schema, url } = await tempSchema();
    const store = await openPostgresStore(url, { listen: false });
    onCleanup(() => store.close());
    const texts = ["", "a", "Ab", "aaa", "ÉéÉ x", "İstanbul 42", "👍🏽 ok\n%_\\", "Σσς ß", "e\u0301 ab ab"];
    for (const text of texts) {
      const { grams } = (
        await sql<{ grams: string[] }>(`SELECT "${schema}".waymark_error_grams($1) AS grams`, [text])
      )[0]!;
      const chars = Array.from((await sql<{ l: string }>("SELECT lower($1) AS l", [text]))[0]!.l);
      const expected = new Set([...chars, ...chars.slice(1).map((c, i) => chars[i] + c)]);
      expect(grams.toSorted(), text).toEqual([...expected].toSorted());
    }
  });

  it("records and finds an error of 200,000 characters (the grams are made in one pass)", async () => {
    const store = await openPostgresStore((await tempSchema()).url, { listen: false });
    onCleanup(() => store.close());
    const long = `${"é".repeat(100_000)}${"ü".repeat(99_998)}zq`;
    await failedWith(store, [long, "short one"]);
    const found = await store.listRuns({ errorContains: "zq", limit: 10 });
    expect(found.map((r) => r.error?.length)).toHaveLength(1);
    expect(await store.listRuns({ errorContains: "üz", limit: 10 })).toHaveLength(1);
    expect(await store.listRuns({ errorContains: "éü", limit: 10 })).toHaveLength(1);
  });

  it("counts them exactly and fetches the few, also where PostgreSQL would plan them in parallel", async () => {
    const { schema, url } = await tempSchema();
    const store = await openPostgresStore(url, { listen: false });
    onCleanup(() => store.close());
    const pool = new pg.Pool({ ...clientConfig(parsePostgresUrl(url)), max: 1 });
    onCleanup(() => pool.end());
    const t = tables(`"${schema}"`);
    const texts = messages(700);
    await failedWith(store, texts);
    // Every query as a parallel plan where its functions allow it (a subtransaction, as error_text's EXCEPTION
    // block starts, fails in a worker): the setting is named debug_parallel_query from PostgreSQL 16 on.
    const version = Number((await pool.query("SHOW server_version_num")).rows[0].server_version_num);
    await pool.query(`SET ${version >= 160000 ? "debug_parallel_query" : "force_parallel_mode"} = on`);
    for (const needle of ["É", "ς", "Σ", "zq", "%", "\\", "İ", "c"]) {
      const q: RunQuery = { errorContains: needle, limit: 50 };
      const held = plainFilter(texts, needle);
      const probe = errorProbe(t, q)!;
      expect((await pool.query(probe.text, probe.args)).rows[0].n, needle).toBe(Math.min(held.length, 100));
      const few = pgRunsQuery(t, q, "few");
      const keys = (await pool.query<RunRow>(few.text, few.args)).rows.map((r) => r.key);
      expect(keys, needle).toEqual(held.slice(0, 50));
    }
  });
});
