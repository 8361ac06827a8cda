// Store conformance, the search in error text (listRuns errorContains): a case-insensitive substring of the
// stored error, whatever reads it (SQLite: the run_errors trigram index for 3 characters or more, few or many
// candidates; PostgreSQL: the trigram GIN index through ILIKE). %, _ and \ are taken literally, 1 and 2
// characters still match, an error cleared by a replay or a pruned run is no longer found, pages follow the
// keyset cursor with the other filters, and a database migrated from before the index finds its old errors.
// SQLite and PostgreSQL alike; on SQLite every plan is also checked against the scan, on PostgreSQL every path
// (the newest errors alone, then the candidates' count and their fetch or the walk on), cursor pages after each.

import pg from "pg";
import { describe, expect, it } from "vitest";
import { clientConfig, parsePostgresUrl } from "../../src/storage/postgres/connect.js";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { readRuns as pgReadRuns } from "../../src/storage/postgres/run-queries.js";
import { tables } from "../../src/storage/postgres/sql.js";
import { NEWEST_ERRORS } from "../../src/storage/sqlite/run-queries.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { RunQuery, Store } from "../../src/storage/store.js";
import { onCleanup, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";
import { BACKENDS, batch } from "./backends.js";
import { allPages, expectPlansAgree, failedRuns, T0 } from "./fixtures.js";

const ERRORS: Record<string, string> = {
  timeout: JSON.stringify({ name: "Error", message: "Carrier TIMEOUT after 30 s" }),
  percent: JSON.stringify({ name: "Error", message: "coupon 50% off refused" }),
  decoyPercent: JSON.stringify({ name: "Error", message: "coupon 50 percent off refused" }),
  underscore: JSON.stringify({ name: "Error", message: "field order_id missing" }),
  decoyUnderscore: JSON.stringify({ name: "Error", message: "field orderXid missing" }),
  backslash: JSON.stringify({ name: "Error", message: "path C:\\temp not found" }),
  decoyBackslash: JSON.stringify({ name: "Error", message: "path C:temp not found" }),
  quote: '{"name":"Error","message":"say \\"hi\\" AND \\"bye\\""}',
};

const keysOf = async (store: Store, q: Partial<RunQuery>) =>
  (await store.listRuns({ limit: 100, ...q })).map((r) => r.key);

/** A runs row as an older version's database holds it (for fresh.atVersion). */
const run = (id: number, key: string, error: string | null) => ({
  id,
  workflow: "wf",
  key,
  version: 1,
  status: error ? "failed" : "completed",
  error,
  initial_state: "{}",
  state: "{}",
  created_at: T0 + id,
  updated_at: T0 + id,
});

describe.each(BACKENDS)("$name store: search in error text", (backend) => {
  it("finds a case-insensitive substring, %, _ and \\ literally, and strings of 1 and 2 characters", async () => {
    const store = await (await backend.fresh()).open();
    await failedRuns(store, Object.entries(ERRORS));
    const find = (errorContains: string) => keysOf(store, { errorContains });
    expect(await find("rier timeo")).toEqual(["timeout"]); // inside words
    expect(await find("carrier Timeout")).toEqual(["timeout"]);
    expect(await find("50% off")).toEqual(["percent"]);
    expect(await find("0% o")).toEqual(["percent"]);
    expect(await find("order_id")).toEqual(["underscore"]);
    expect(await find("r_i")).toEqual(["underscore"]);
    expect(await find("C:\\temp")).toEqual(["backslash"]); // the message's one backslash, not the JSON's two
    expect(await find("C:\\\\temp")).toEqual([]);
    expect(await find("C:\\")).toEqual(["backslash"]);
    expect(await find('"hi" AND')).toEqual(["quote"]); // quotes and an FTS5 keyword, literally
    expect(await find('"bye')).toEqual(["quote"]);
    expect(await find("%")).toEqual(["percent"]);
    expect(await find("_")).toEqual(["underscore"]);
    expect(await find("\\")).toEqual(["backslash"]);
    expect(await find("0%")).toEqual(["percent"]);
    expect(await find("R_")).toEqual(["underscore"]);
    expect(await find("not found")).toEqual(["decoyBackslash", "backslash"]);
    expect(await find("no run has this")).toEqual([]);
  });

  it("searches the error's message as written: quotes, backslashes, newlines and tabs by their own text", async () => {
    const store = await (await backend.fresh()).open();
    const messages: Array<[string, string]> = [
      ["quote", 'say "x" now'],
      ["backslash", "C:\\dir"],
      ["newline", "two\nlines"],
      ["tab", "col\tumn"],
      ["plain", "plain"],
      ["accent", "école"],
    ];
    await failedRuns(
      store,
      messages.map(([key, message]) => [
        key,
        JSON.stringify({ name: "Error", message, stack: `Error: ${message}` }),
      ]),
    );
    const find = (errorContains: string) => keysOf(store, { errorContains });
    for (const [key, message] of messages) expect(await find(message), message).toEqual([key]);
    expect(await find('say "x"')).toEqual(["quote"]);
    expect(await find('"x"')).toEqual(["quote"]);
    expect(await find("C:\\")).toEqual(["backslash"]);
    expect(await find("\\")).toEqual(["backslash"]);
    expect(await find("two\nl")).toEqual(["newline"]);
    expect(await find("\n")).toEqual(["newline"]);
    expect(await find("l\tu")).toEqual(["tab"]);
    expect(await find("COLE")).toEqual(["accent"]);
    // What the stored JSON holds around the message is not searched: its keys, syntax, escapes, name, stack.
    for (const syntax of [
      "message",
      "stack",
      "name",
      "code",
      "Error",
      "{",
      '"',
      '","',
      '\\"',
      "\\n",
      '":"',
    ]) {
      expect(await find(syntax), syntax).toEqual(syntax === '"' ? ["quote"] : []);
    }
  });

  it("finds a code, name or key only where a message holds it, and an error that is not JSON by its text", async () => {
    const store = await (await backend.fresh()).open();
    await failedRuns(store, [
      [
        "coded",
        JSON.stringify({ name: "TypeError", message: "bad input", code: "E_INPUT", details: { a: 1 } }),
      ],
      ["says", JSON.stringify({ name: "Error", message: 'the "message" key and code E_INPUT' })],
      ["raw", "not JSON: {message"],
      ["array", "[1, 2]"],
      ["nomessage", JSON.stringify({ name: "Error" })],
    ]);
    const find = (errorContains: string) => keysOf(store, { errorContains });
    expect(await find("E_INPUT")).toEqual(["says"]);
    expect(await find("TypeError")).toEqual([]);
    expect(await find("bad input")).toEqual(["coded"]);
    expect(await find('"message"')).toEqual(["says"]);
    expect(await find("not json: {mess")).toEqual(["raw"]);
    expect(await find("{")).toEqual(["nomessage", "raw"]);
    expect(await find("[1, 2]")).toEqual(["array"]);
    expect(await find("message")).toEqual(["raw", "says"]);
  });

  it("finds by message the errors of runs written by the previous version (the migration rebuilds the index)", async () => {
    const fresh = await backend.fresh();
    await fresh.atVersion(15, {
      runs: [
        run(1, "old-quote", JSON.stringify({ name: "Error", message: 'say "x" now', stack: "Error: at f" })),
        run(2, "old-ok", null),
        run(3, "old-dir", JSON.stringify({ name: "Error", message: "C:\\dir" })),
        run(4, "old-raw", "plain text error"),
      ],
    });
    const store = await fresh.open();
    const find = (errorContains: string) => keysOf(store, { errorContains });
    expect(await find('say "x" now')).toEqual(["old-quote"]);
    expect(await find("C:\\dir")).toEqual(["old-dir"]);
    expect(await find("plain text")).toEqual(["old-raw"]);
    expect(await find("stack")).toEqual([]);
    expect(await find("message")).toEqual([]);
    expect(await find('\\"')).toEqual([]);
    // And runs written after it, by the new triggers.
    await failedRuns(store, [["new-quote", JSON.stringify({ name: "Error", message: 'say "y" now' })]]);
    expect(await find('say "')).toEqual(["old-quote", "new-quote"]);
  });

  it("finds by 1 or 2 characters the errors of runs written before the short-string index (migration 17)", async () => {
    const fresh = await backend.fresh();
    await fresh.atVersion(16, {
      runs: [
        run(1, "old-word", JSON.stringify({ name: "Error", message: "Zqx failed" })),
        run(2, "old-short", JSON.stringify({ name: "Error", message: "É" })),
        run(3, "old-ok", null),
        run(4, "old-raw", "raw 42"),
      ],
    });
    // 600 newer errors, so a search gets past the newest errors it reads first, to the index.
    await fresh.raw(
      `WITH RECURSIVE n(i) AS (SELECT 5 UNION ALL SELECT i + 1 FROM n WHERE i < 604)
       INSERT INTO {t}runs (workflow, key, version, status, error, initial_state, state, created_at, updated_at)
       SELECT 'wf', 'filler-' || i, 1, 'failed', '{"name":"Error","message":"filler"}', '{}', '{}',
         ${T0} + i, ${T0} + i FROM n`,
    );
    const store = await fresh.open();
    const find = (errorContains: string) => keysOf(store, { errorContains });
    expect(await find("zq")).toEqual(["old-word"]);
    expect(await find("é")).toEqual(["old-short"]);
    expect(await find("42")).toEqual(["old-raw"]);
    expect(await find("d")).toEqual(["old-word"]);
    expect(await find("qz")).toEqual([]);
    // And runs written after it.
    await failedRuns(store, [["new-short", JSON.stringify({ name: "Error", message: "zq" })]]);
    expect(await find("zq")).toEqual(["old-word", "new-short"]);
  });

  it("no longer finds an error a replay cleared, nor a pruned run", async () => {
    const store = await (await backend.fresh()).open();
    const [a, b, c] = await failedRuns(store, [
      ["a", ERRORS.timeout!],
      ["b", ERRORS.timeout!],
      ["c", ERRORS.timeout!],
    ]);
    expect(await keysOf(store, { errorContains: "carrier timeout" })).toEqual(["c", "b", "a"]);
    // As a replay writes it: pending again, the error and signature cleared.
    await store.commit(
      batch(T0 + 20_000, {
        runs: [{ id: b!.id, status: "pending", error: null, failureSignature: null, finishedAt: null }],
      }),
    );
    expect(await keysOf(store, { errorContains: "carrier timeout" })).toEqual(["c", "a"]);
    // A new error in its place is found by its own text only.
    await store.commit(
      batch(T0 + 21_000, {
        runs: [{ id: c!.id, error: JSON.stringify({ name: "Error", message: "stock missing" }) }],
      }),
    );
    expect(await keysOf(store, { errorContains: "carrier timeout" })).toEqual(["a"]);
    expect(await keysOf(store, { errorContains: "stock missing" })).toEqual(["c"]);
    await store.pruneRuns([{ workflow: "wf", status: "failed", finishedBefore: T0 + 30_000 }], 100);
    expect(await store.getRun(a!.id)).toBeUndefined();
    expect(await keysOf(store, { errorContains: "carrier timeout" })).toEqual([]);
    expect(await keysOf(store, { errorContains: "stock missing" })).toEqual([]);
  });

  it("pages with the keyset cursor, newest first, with the other filters, for few and many matches", async () => {
    const store = await (await backend.fresh()).open();
    // 300 runs in two workflows: a third declined (few candidates), two thirds timed out (many).
    const errors = Array.from({ length: 300 }, (_, i): [string, string] => [
      `r${String(i).padStart(3, "0")}`,
      JSON.stringify({ name: "Error", message: i % 3 === 0 ? `card declined for c${i}` : `timeout ${i}` }),
    ]);
    await failedRuns(store, errors.slice(0, 150), "invoice");
    // The rest come later, in another workflow.
    const later = await store.commit(
      batch(T0, {
        creates: errors.slice(150).map(([key], i) => ({
          workflow: "report",
          key,
          version: 1,
          input: null,
          initialState: "{}",
          now: T0 + 150 + i,
          owner: null,
          leaseUntil: null,
        })),
      }),
    );
    await store.commit(
      batch(T0 + 10_000, {
        runs: later.created.map((c, i) => ({
          id: c.run.id,
          status: "failed" as const,
          error: errors[150 + i]![1],
          finishedAt: T0 + 10_000,
        })),
      }),
    );
    const expected = (filter: (i: number) => boolean) =>
      errors
        .map(([key], i) => ({ key, i }))
        .filter(({ i }) => filter(i))
        .map(({ key }) => key)
        .reverse();
    for (const [needle, holds] of [
      ["CARD declined", (i: number) => i % 3 === 0],
      ["timeout", (i: number) => i % 3 !== 0],
      ["r c1", (i: number) => i % 3 === 0 && String(i).startsWith("1")],
    ] as const) {
      expect(await allPages(store, { errorContains: needle, limit: 7 })).toEqual(expected(holds));
      expect(await allPages(store, { errorContains: needle, limit: 40, workflow: "invoice" })).toEqual(
        expected((i) => holds(i) && i < 150),
      );
      expect(
        await allPages(store, {
          errorContains: needle,
          limit: 9,
          status: ["failed"],
          createdAfter: T0 + 100,
          createdBefore: T0 + 200,
        }),
      ).toEqual(expected((i) => holds(i) && i >= 100 && i < 200));
    }
  });

  it("finds the errors of runs written before the index existed (the migration fills it)", async () => {
    const fresh = await backend.fresh();
    await fresh.atVersion(14, {
      runs: [
        run(1, "old-timeout", ERRORS.timeout!),
        run(2, "old-ok", null),
        run(3, "old-stock", ERRORS.underscore!),
      ],
    });
    const store = await fresh.open();
    expect(await keysOf(store, { errorContains: "carrier timeout" })).toEqual(["old-timeout"]);
    expect(await keysOf(store, { errorContains: "order_id" })).toEqual(["old-stock"]);
  });
});

/**
 * 2,500 failed runs' errors, keyed k0..k2499: every other one a dense "HTTP 503 from Tax API", the rest "Stock
 * Missing" over `skus` SKUs (with % and an accent now and then), and " legacy path" only in the oldest 300.
 */
function layeredErrors(skus: number): Array<[string, string]> {
  return Array.from({ length: 2500 }, (_, i): [string, string] => [
    `k${i}`,
    JSON.stringify({
      name: "Error",
      message: `${i % 2 ? `HTTP 503 from Tax API ${i}` : `Stock Missing: SKU_${i % skus} 100% ${i % 5 ? "x" : "é"}`}${
        i < 300 ? " legacy path" : ""
      }`,
    }),
  ]);
}

describe("on SQLite every plan of a search in error text answers as the scan does", () => {
  it("few, many, the newest errors first and scan return the same pages, cursor or not", async () => {
    const store = openSqliteStore(tempDb());
    onCleanup(() => store.close());
    // 2,500 failed runs: more than NEWEST_ERRORS, so a dense string is answered within the newest errors and
    // a string only the oldest 300 hold (many candidates, none new) is walked with the candidates' set.
    const errors = layeredErrors(7);
    const runs = await failedRuns(store, errors);
    expect(NEWEST_ERRORS).toBeLessThan(runs.length);
    const db = store.db;
    const plans = new Set<string>();
    const middle = runs[1200]!;
    for (const needle of [
      "tax api",
      "STOCK missing: sku_3",
      "legacy path",
      "sku_",
      "100% é",
      "503 from tax api 17",
      "ÉÉÉ",
      "é",
    ]) {
      for (const limit of [5, 50, 500]) {
        for (const before of [undefined, { createdAt: middle.createdAt, id: middle.id }]) {
          expectPlansAgree(db, { errorContains: needle, limit, ...(before ? { before } : {}) }, plans);
        }
      }
    }
    expect([...plans].sort()).toEqual(["few", "many"]);
  });
});

describe("on PostgreSQL every path of a search in error text answers as the scan does", () => {
  it("the newest errors (a full page, every error, or on to the candidates: few, or the walk on) and the scan agree", async () => {
    const { schema, url } = await tempSchema();
    const store = await openPostgresStore(url, { listen: false });
    onCleanup(() => store.close());
    const pool = new pg.Pool(clientConfig(parsePostgresUrl(url)));
    onCleanup(() => pool.end());
    const t = tables(`"${schema}"`);
    // 2,500 failed runs in two workflows: more than the newest errors read for any page, so a dense string
    // fills its page there, a sparse one goes on to the candidates (few: fetched; many: the walk goes on from
    // the last of the newest), and a string only the oldest 300 hold has many candidates and none new; a page
    // of 600 is larger than any window and goes to the candidates at once.
    const errors = layeredErrors(29);
    await failedRuns(store, errors.slice(0, 1250), "invoice");
    await failedRuns(store, errors.slice(1250), "report");
    const all = await store.listRuns({ limit: 3000 });
    expect(all).toHaveLength(2500);
    const middle = all[1200]!;
    const paths = new Set<string>();
    /** readRuns through a pool that notes which plans it read. */
    const noted = async (q: RunQuery) => {
      const texts: string[] = [];
      const db = {
        query: (text: string, args: unknown[]) => {
          texts.push(text);
          return pool.query(text, args);
        },
      };
      const rows = await pgReadRuns(db as unknown as pg.Pool, t, q, true);
      paths.add(
        texts
          .map((s) =>
            s.includes("row_number()")
              ? "newest"
              : s.includes("count(*)")
                ? "count"
                : s.includes("ILIKE")
                  ? "few"
                  : "scan",
          )
          .join(" "),
      );
      return rows;
    };
    const scan = (q: RunQuery) => pgReadRuns(pool, t, q, false);
    for (const needle of [
      "tax api",
      "STOCK missing: sku_3",
      "legacy path",
      "sku_",
      "100% é",
      "tax api 17",
      "ÉÉÉ",
    ]) {
      for (const limit of [5, 26, 50, 600]) {
        for (const filters of [
          {},
          { before: { createdAt: middle.createdAt, id: middle.id } },
          { workflow: "report", status: ["failed" as const], createdAfter: all[2000]!.createdAt },
          { createdBefore: middle.createdAt },
        ]) {
          const q: RunQuery = { errorContains: needle, limit, ...filters };
          const expected = await scan(q);
          expect(await noted(q), `${needle} ${limit} ${JSON.stringify(filters)}`).toEqual(expected);
          // And the page after it, from its last run.
          const last = expected.at(-1);
          if (expected.length === limit && last) {
            const next: RunQuery = { ...q, before: { createdAt: last.createdAt, id: last.id } };
            expect(await noted(next), `${needle} ${limit} next`).toEqual(await scan(next));
          }
        }
      }
    }
    // Every page in turn, with the store's own plans, against the scan's one page of them all.
    for (const needle of ["tax api 1", "legacy path", "sku_7 "]) {
      const expected = (await scan({ errorContains: needle, limit: 3000 })).map((r) => r.key);
      expect(expected.length).toBeGreaterThan(30);
      expect(await allPages(store, { errorContains: needle, limit: 26 })).toEqual(expected);
    }
    expect([...paths].sort()).toEqual([
      "count few",
      "count scan",
      "newest",
      "newest count few",
      "newest count scan",
    ]);
  });
});
