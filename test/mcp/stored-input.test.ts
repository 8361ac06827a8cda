// `waymark mcp --stdio` on SQLite and on PostgreSQL, through the SDK's stdio client: a NUL character or half a
// surrogate pair in a filter, key or URI, a time past a Date's range and a cursor holding 1e300 or -1 get
// INVALID_INPUT (or INVALID_CURSOR) naming the argument, in the same words on both stores; PostgreSQL
// answered STORAGE_FAILED "invalid byte sequence" or a bigint syntax error. The server goes on serving.

import { afterEach, describe, expect, it } from "vitest";
import { tempSchema } from "../postgres/pg.js";
import { Closer, call, stdioClient, tempDb, text } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const NUL = "\u0000";
const HALF = "\uD800";
const listCursor = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString("base64url");
const historyCursor = (runId: number, after: unknown) =>
  Buffer.from(JSON.stringify([runId, after])).toString("base64url");

const STORES = [
  { name: "sqlite", db: async () => tempDb(closer) },
  { name: "postgres", db: async () => (await tempSchema()).url },
];

async function serve(db: string) {
  return (await stdioClient(closer, ["--create", "--db", db, "--registry", "test/mcp/workflows.ts"])).client;
}

/** Tool calls no store can answer as asked: [tool, arguments, the code and words the answer must hold]. */
const CASES: Array<[string, Record<string, unknown>, string]> = [
  ["list_runs", { workflow: `approval${NUL}` }, "INVALID_INPUT: Invalid option workflow"],
  ["list_runs", { key: `p${NUL}1` }, "INVALID_INPUT: Invalid option key"],
  ["list_runs", { keyContains: NUL }, "INVALID_INPUT: Invalid option keyContains"],
  ["list_runs", { keyContains: HALF }, "INVALID_INPUT: Invalid option keyContains"],
  ["list_runs", { errorContains: `x${NUL}` }, "INVALID_INPUT: Invalid option errorContains"],
  ["list_runs", { createdAfter: "99999999999999999999999" }, "INVALID_INPUT: Invalid option createdAfter"],
  ["list_runs", { createdBefore: "99999999999999999999999" }, "INVALID_INPUT: Invalid option createdBefore"],
  ["list_runs", { cursor: listCursor([1e300, 1]) }, "INVALID_INPUT: Invalid cursor"],
  ["list_runs", { cursor: listCursor([1, 1e300]) }, "INVALID_INPUT: Invalid cursor"],
  ["list_runs", { cursor: listCursor([-1, 1]) }, "INVALID_INPUT: Invalid cursor"],
  ["list_runs", { cursor: listCursor([1.5, 1]) }, "INVALID_INPUT: Invalid cursor"],
  ["list_failures", { workflow: NUL }, "INVALID_INPUT: Invalid option workflow"],
  ["list_failures", { since: "99999999999999999999999" }, "INVALID_INPUT: Invalid option since"],
  [
    "start_run",
    { workflow: "approval", key: `p${NUL}1`, input: { amount: 1 } },
    "INVALID_INPUT: Invalid run key",
  ],
  [
    "start_run",
    { workflow: "approval", key: `p${HALF}`, input: { amount: 1 } },
    "INVALID_INPUT: Invalid run key",
  ],
  ["get_run", { workflow: "approval", key: `p${NUL}1` }, "INVALID_INPUT: Invalid run key"],
  ["get_run", { workflow: `approval${NUL}`, key: "p-1" }, "INVALID_INPUT: Invalid workflow name"],
  [
    "send_message",
    { workflow: "approval", key: `p${NUL}1`, queue: "decisions", body: { approve: true, by: "x" } },
    "INVALID_INPUT: Invalid run key",
  ],
];

/** What each store answered, by case, compared once both have run. */
const answers = new Map<string, string[]>();

describe.each(STORES)("mcp over stdio on $name", (store) => {
  it("refuses what no store can hold with INVALID_INPUT naming the argument, and goes on serving", async () => {
    const client = await serve(await store.db());
    const started = await call(client, "start_run", {
      workflow: "approval",
      key: "p-1",
      input: { amount: 2 },
    });
    expect(started.isError, text(started)).toBeFalsy();
    const runId = started.structuredContent!.run.id as number;
    const got: string[] = [];
    for (const [tool, args, expected] of CASES) {
      const res = await call(client, tool, args);
      expect([tool, args, res.isError]).toEqual([tool, args, true]);
      expect(text(res), `${tool} ${JSON.stringify(args)}`).toContain(expected);
      got.push(text(res));
    }
    for (const after of [1e300, -1, 1.5]) {
      const res = await call(client, "get_history", {
        workflow: "approval",
        key: "p-1",
        cursor: historyCursor(runId, after),
      });
      expect([after, res.isError, text(res)]).toEqual([
        after,
        true,
        expect.stringContaining("INVALID_CURSOR"),
      ]);
    }
    // A subscription to a URI naming a key with NUL in it is refused as naming nothing, not as a storage failure.
    const refused = await client.subscribeResource({ uri: "waymark://runs/approval/p%001" }).then(
      () => "subscribed",
      (err: Error) => err.message,
    );
    expect(refused).toContain("Invalid run key");
    expect(refused).not.toContain("STORAGE");
    answers.set(store.name, got);

    // Still serving, and nothing was written by the refusals.
    const listed = await call(client, "list_runs", {});
    expect(listed.structuredContent!.runs.map((r: { key: string }) => r.key)).toEqual(["p-1"]);
  });
});

it("both stores answer each refusal in the same words", () => {
  expect([...answers.keys()]).toEqual(STORES.map((s) => s.name));
  expect(answers.get("postgres")).toEqual(answers.get("sqlite"));
});
