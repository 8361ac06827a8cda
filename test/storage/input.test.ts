// Store conformance, what callers may ask of a store: through an engine on each backend, a NUL character or
// half a surrogate pair in a filter, name or key, and times, versions, cursors and entry ids no column can
// hold are refused with INVALID_INPUT naming the option, before any query, with the same message on every
// store (PostgreSQL answered STORAGE_FAILED "invalid byte sequence" or a bigint syntax error; SQLite matched
// nothing). JSON values may hold both: they are stored escaped and come back unchanged.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { FakeClock, FatalError, setup, workflow } from "../../src/index.js";
import { closeLater } from "../helpers.js";
import { BACKENDS, type Backend } from "./backends.js";

const NUL = "\u0000";
const HALF = "\uD800";
const cursor = (parts: unknown) => Buffer.from(JSON.stringify(parts)).toString("base64url");

const echo = workflow({
  state: { note: "" },
  queues: { notes: z.object({ text: z.string() }) },
  actions: { note: (c) => c.state.note },
  run: async (ctx, input: { text: string }) => {
    const out = await ctx.step("keep", (s) => {
      s.state.note = `${input.text}|${NUL}|${HALF}`;
      return { [NUL]: input.text, half: HALF };
    });
    const message = await ctx.queue.next("read", { queue: "notes" });
    await ctx.step("fail", () => {
      throw new FatalError(`refused ${message.text}`);
    });
    return out;
  },
});

async function engineOn(backend: Backend) {
  const store = await (await backend.fresh()).open();
  return closeLater(await setup({ use: { echo } }).start({ database: store, clock: new FakeClock() }));
}

type Engine = Awaited<ReturnType<typeof engineOn>>;

/** Calls that no store can answer as asked, each with the option its refusal must name. */
function refusals(engine: Engine, runId: number): Array<[string, string, () => Promise<unknown>]> {
  return [
    ["listRuns workflow NUL", "option workflow", () => engine.listRuns({ workflow: `echo${NUL}` })],
    ["listRuns key NUL", "option key", () => engine.listRuns({ key: `k${NUL}` })],
    ["listRuns keyContains NUL", "option keyContains", () => engine.listRuns({ keyContains: NUL })],
    ["listRuns errorContains NUL", "option errorContains", () => engine.listRuns({ errorContains: NUL })],
    [
      "listRuns failureSignature NUL",
      "option failureSignature",
      () => engine.listRuns({ failureSignature: NUL }),
    ],
    ["listRuns keyContains half pair", "option keyContains", () => engine.listRuns({ keyContains: HALF })],
    ["listRuns createdAfter 1e23", "option createdAfter", () => engine.listRuns({ createdAfter: 1e23 })],
    [
      "listRuns createdAfter 99999999999999999999999",
      "option createdAfter",
      () => engine.listRuns({ createdAfter: Number("99999999999999999999999") }),
    ],
    ["listRuns createdBefore 1.5", "option createdBefore", () => engine.listRuns({ createdBefore: 1.5 })],
    [
      "listRuns createdBefore -1e300",
      "option createdBefore",
      () => engine.listRuns({ createdBefore: -1e300 }),
    ],
    ["listRuns version 1e10", "option version", () => engine.listRuns({ version: 1e10 })],
    ["listRuns version 1.5", "option version", () => engine.listRuns({ version: 1.5 })],
    ["listRuns version 0", "option version", () => engine.listRuns({ version: 0 })],
    ["listRuns cursor [1e300,1]", "cursor", () => engine.listRuns({ cursor: cursor([1e300, 1]) })],
    ["listRuns cursor [1,1e300]", "cursor", () => engine.listRuns({ cursor: cursor([1, 1e300]) })],
    ["listRuns cursor [-1,1]", "cursor", () => engine.listRuns({ cursor: cursor([-1, 1]) })],
    ["listRuns cursor [1,-1]", "cursor", () => engine.listRuns({ cursor: cursor([1, -1]) })],
    ["listRuns cursor [1.5,1]", "cursor", () => engine.listRuns({ cursor: cursor([1.5, 1]) })],
    ["listRuns cursor ['1',1]", "cursor", () => engine.listRuns({ cursor: cursor(["1", 1]) })],
    ["failureGroups since 1e300", "option since", () => engine.failureGroups({ since: 1e300 })],
    ["failureGroups since 1.5", "option since", () => engine.failureGroups({ since: 1.5 })],
    [
      "failureGroups workflow NUL",
      "option workflow",
      () => engine.failureGroups({ since: 0, workflow: NUL }),
    ],
    [
      "failureGroups signature NUL",
      "option signature",
      () => engine.failureGroups({ since: 0, signature: NUL }),
    ],
    ["get key NUL", "run key", () => engine.get("echo", `k${NUL}`)],
    ["get workflow NUL", "workflow name", () => engine.get(`echo${NUL}` as never, "k")],
    ["get key half pair", "run key", () => engine.get("echo", `k${HALF}`)],
    ["getOrCreate key NUL", "run key", () => engine.getOrCreate("echo", `k${NUL}`, { text: "x" })],
    ["getOrCreate key half pair", "run key", () => engine.getOrCreate("echo", `k${HALF}`, { text: "x" })],
    ["history after 1e300", "option after", () => engine.history(runId, { after: 1e300 })],
    ["history after 1.5", "option after", () => engine.history(runId, { after: 1.5 })],
    ["history after -1", "option after", () => engine.history(runId, { after: -1 })],
    [
      "send idempotency key NUL",
      "idempotency key",
      () => engine.send(runId, "notes", { text: "y" }, { idempotencyKey: `i${NUL}` }),
    ],
    [
      "send idempotency key half pair",
      "idempotency key",
      () => engine.send(runId, "notes", { text: "y" }, { idempotencyKey: `i${HALF}` }),
    ],
  ];
}

/** Each backend's refusal messages by case, compared once every backend has run. */
const messages = new Map<string, Map<string, string>>();

describe.each(BACKENDS)("$name store: input no store can hold", (backend) => {
  it("refuses NUL, half pairs, out-of-range times, versions, cursors and entry ids with INVALID_INPUT", async () => {
    const engine = await engineOn(backend);
    const run = await engine.getOrCreate("echo", "r-1", { text: "in" });
    await engine.watchRun(run.id, (r) => r.status === "waiting");
    // A finished run too: a send to it looks its idempotency key up before anything else.
    const done = await engine.getOrCreate("echo", "r-2", { text: "in" });
    await engine.send(done.id, "notes", { text: "go" });
    await engine.watchRun(done.id, (r) => r.status === "failed");
    const seen = new Map<string, string>();
    for (const runId of [run.id, done.id]) {
      for (const [name, field, call] of refusals(engine, runId)) {
        const err = await call().then(
          () => null,
          (e: unknown) => e as Error & { code?: string },
        );
        expect(err, `${name} was accepted`).not.toBeNull();
        expect([name, err!.code]).toEqual([name, "INVALID_INPUT"]);
        expect(err!.message, name).toContain(`Invalid ${field}`);
        if (runId === run.id) seen.set(name, err!.message);
      }
    }
    messages.set(backend.name, seen);
    // Nothing was written: the runs are as they were.
    expect((await engine.listRuns()).runs.map((r) => [r.key, r.status])).toEqual([
      ["r-2", "failed"],
      ["r-1", "waiting"],
    ]);
  });

  it("accepts the edges: times at a Date's limits, the largest version, a cursor it issued", async () => {
    const engine = await engineOn(backend);
    for (const key of ["a", "b"]) await engine.getOrCreate("echo", key, { text: key });
    expect((await engine.listRuns({ createdAfter: -8.64e15, createdBefore: 8.64e15 })).runs).toHaveLength(2);
    expect((await engine.listRuns({ createdAfter: new Date(8.64e15) })).runs).toEqual([]);
    expect((await engine.listRuns({ version: 2_147_483_647 })).runs).toEqual([]);
    const first = await engine.listRuns({ limit: 1 });
    const next = await engine.listRuns({ limit: 1, cursor: first.nextCursor! });
    expect([...first.runs, ...next.runs].map((r) => r.key)).toEqual(["b", "a"]);
    expect((await engine.failureGroups({ since: -8.64e15 })).total).toBe(0);
    expect(
      await engine.history((await engine.get("echo", "a")).id, { after: Number.MAX_SAFE_INTEGER }),
    ).toEqual([]);
  });

  it("stores NUL and half pairs inside JSON values and gives them back unchanged", async () => {
    const engine = await engineOn(backend);
    const run = await engine.getOrCreate("echo", "values", { text: `in${NUL}${HALF}` });
    await engine.watchRun(run.id, (r) => r.status === "waiting");
    await run.send("notes", { text: `msg${NUL}${HALF}` });
    await engine.watchRun(run.id, (r) => r.status === "failed");
    const info = await run.info();
    expect(info.input).toEqual({ text: `in${NUL}${HALF}` });
    expect(info.state).toEqual({ note: `in${NUL}${HALF}|${NUL}|${HALF}` });
    const [keep, read, fail] = await engine.history(run.id);
    expect(keep!.output).toEqual({ [NUL]: `in${NUL}${HALF}`, half: HALF });
    expect(read!.output).toEqual({ text: `msg${NUL}${HALF}` });
    expect((fail!.error as { message: string }).message).toContain(`FatalError: refused msg${NUL}${HALF}`);
    expect((await engine.listRuns({ errorContains: "refused msg" })).runs.map((r) => r.key)).toEqual([
      "values",
    ]);
  });
});

it("every store refuses each case with the same words", () => {
  expect([...messages.keys()]).toEqual(BACKENDS.map((b) => b.name));
  const [first, ...rest] = [...messages.values()];
  for (const other of rest) expect(other).toEqual(first);
});

describe("definitions no store could hold", () => {
  it("refuses a description with NUL, a queue name with NUL, | or half a pair, and a version past 2^31-1", () => {
    const run = async () => null;
    expect(() => workflow({ description: `d${NUL}`, run })).toThrow(/description.*NUL/);
    expect(() => workflow({ queues: { [`q${NUL}`]: z.unknown() }, run })).toThrow(/queue name/);
    expect(() => workflow({ queues: { "a|b": z.unknown() }, run })).toThrow(/queue name/);
    expect(() => workflow({ queues: { [`q${HALF}`]: z.unknown() }, run })).toThrow(/queue name/);
    expect(() => workflow({ version: 2 ** 31, run })).toThrow(/version/);
    expect(() => setup({ use: { [`w${HALF}`]: workflow({ run }) } })).toThrow(/surrogate/);
  });
});
