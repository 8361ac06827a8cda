// Tags to find runs by, through the engine: given at getOrCreate, set by step.tag (committed with the step's
// record, a failed attempt's dropped), shown by info and listRuns, filtering listRuns (with its cursor) and
// listFailures, and refused past their limits with the limit named. On SQLite and PostgreSQL.

import { describe, expect, it } from "vitest";
import { driveRun, waitForStatus } from "../../fixtures/wait.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const DATABASES = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

function definitions(timeline: string[] = []) {
  const invoice = workflow({
    state: { bad: false },
    run: async (ctx, input: { fail?: string } | undefined) => {
      await ctx.step(
        "classify",
        (s) => {
          timeline.push(`classify:${s.attempt}`);
          if (s.attempt === 1) {
            s.tag("attempt", "first");
            s.state.bad = true;
            throw new Error("flaky classifier");
          }
          s.tag("tier", "gold");
          s.tag("region", "us");
        },
        { retries: 1, backoff: { initial: "1s", jitter: false } },
      );
      if (input?.fail) await ctx.step("charge", () => Promise.reject(new Error(input.fail)), { retries: 0 });
      return "ok";
    },
  });
  const many = workflow({
    run: async (ctx, input: { names: string[] }) => {
      await ctx.step("tag-all", (s) => {
        for (const n of input.names) s.tag(n, "x");
      });
    },
  });
  return setup({ use: { invoice, many } });
}

describe.each(DATABASES)("tags on $name", ({ database }) => {
  it("getOrCreate stores tags, info and listRuns show them, and a second getOrCreate keeps the first's", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await definitions().start({ database: await database(), clock }));
    const a = await engine.getOrCreate(
      "many",
      "a",
      { names: [] },
      { tags: { customer: "c-9", region: "eu" } },
    );
    await engine.getOrCreate("many", "b", { names: [] }, { tags: { customer: "c-1" } });
    const again = await engine.getOrCreate("many", "a", { names: [] }, { tags: { customer: "c-2" } });
    expect(again.id).toBe(a.id);
    await waitForStatus(engine, a, ["completed"]);
    expect((await engine.info(a.id)).tags).toEqual({ customer: "c-9", region: "eu" });
    const page = await engine.listRuns({ tags: { customer: "c-9" } });
    expect(page.runs.map((r) => [r.key, r.tags])).toEqual([["a", { customer: "c-9", region: "eu" }]]);
    expect((await engine.listRuns({ tags: { customer: "c-2" } })).runs).toEqual([]);
    expect((await engine.listRuns({ tags: { customer: "c-9", region: "us" } })).runs).toEqual([]);
    expect((await engine.listRuns({ workflow: "many" })).runs.map((r) => r.tags)).toEqual([
      { customer: "c-1" },
      { customer: "c-9", region: "eu" },
    ]);
  });

  it("refuses tags past their limits, naming the limit, and creates no run", async () => {
    const engine = closeLater(
      await definitions().start({ database: await database(), clock: new FakeClock() }),
    );
    const tooMany = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`t${i}`, "v"]));
    const refusals: Array<[Record<string, unknown>, string, RegExp]> = [
      [tooMany, "TAG_LIMIT_EXCEEDED", /at most 20 tags; this would give it 21/],
      [{ ["n".repeat(65)]: "v" }, "TAG_LIMIT_EXCEEDED", /has 65 characters; the limit is 64/],
      [{ customer: "v".repeat(257) }, "TAG_LIMIT_EXCEEDED", /has 257 characters; the limit is 256/],
      [{ customer: 9 }, "INVALID_TAG", /must be a string; got 9/],
      [{ "cust omer": "v" }, "INVALID_TAG", /only letters, digits and _ \. : \/ -/],
      [{ customer: "a\u0000b" }, "INVALID_TAG", /control character/],
    ];
    for (const [tags, code, message] of refusals) {
      await expect(
        engine.getOrCreate("many", "refused", { names: [] }, { tags: tags as Record<string, string> }),
      ).rejects.toMatchObject({ code, message: expect.stringMatching(message) });
    }
    await expect(
      engine.getOrCreate("many", "refused", { names: [] }, { labels: {} } as never),
    ).rejects.toMatchObject({
      code: "INVALID_INPUT",
      message: expect.stringContaining('unknown option "labels"'),
    });
    expect(await engine.findRun("many", "refused")).toBeUndefined();
    // Exactly at the limits is taken.
    const full = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`t${i}`, "v".repeat(256)]));
    full["n".repeat(64)] = "x";
    delete full.t0;
    const run = await engine.getOrCreate("many", "full", { names: [] }, { tags: full });
    expect(Object.keys((await engine.info(run.id)).tags)).toHaveLength(20);
    await expect(engine.listRuns({ tags: { customer: 9 } as never })).rejects.toMatchObject({
      code: "INVALID_TAG",
    });
  });

  it("step.tag commits with the step's record; a failed attempt's tags are dropped with its state", async () => {
    const clock = new FakeClock();
    const timeline: string[] = [];
    const engine = closeLater(await definitions(timeline).start({ database: await database(), clock }));
    const committed: Array<Record<string, string>> = [];
    engine.on((e) => {
      if (e.type === "entry" && e.row.name === "classify") {
        // Once the record is durable, the tags are too (one batch): read them as another process would.
        void engine.info(e.row.runId).then((info) => committed.push({ status: e.row.status, ...info.tags }));
      }
    });
    const run = await engine.getOrCreate("invoice", "inv-1", undefined, { tags: { customer: "c-9" } });
    const { info } = await driveRun(engine, clock, run, ["completed"]);
    expect(timeline).toEqual(["classify:1", "classify:2"]);
    expect(info.tags).toEqual({ customer: "c-9", tier: "gold", region: "us" });
    expect(info.state).toEqual({ bad: false });
    expect(committed).toContainEqual({ status: "retrying", customer: "c-9" });
    expect(committed).toContainEqual({ status: "completed", customer: "c-9", tier: "gold", region: "us" });
    const [entry] = await engine.history(run.id);
    expect(entry?.detail).toEqual({ tags: { tier: "gold", region: "us" } });
    expect(
      (await engine.listRuns({ tags: { tier: "gold", customer: "c-9" } })).runs.map((r) => r.key),
    ).toEqual(["inv-1"]);
    expect((await engine.listRuns({ tags: { attempt: "first" } })).runs).toEqual([]);
  });

  it("a step that would take a run past 20 tags fails at once, naming the limit, and stores none of them", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await definitions().start({ database: await database(), clock }));
    const start = Object.fromEntries(Array.from({ length: 19 }, (_, i) => [`t${i}`, "v"]));
    const run = await engine.getOrCreate(
      "many",
      "over",
      { names: ["t0", "extra1", "extra2"] },
      { tags: start },
    );
    const info = await waitForStatus(engine, run, ["failed"]);
    expect(info.error?.message).toMatch(/TAG_LIMIT_EXCEEDED|at most 20 tags; this would give it 21/);
    const [entry] = await engine.history(run.id);
    expect(entry?.attempts).toHaveLength(1);
    expect(info.tags).toEqual(start);
    // A bad name inside a step fails it at once too.
    const bad = await engine.getOrCreate("many", "bad", { names: ["no spaces"] });
    const failed = await waitForStatus(engine, bad, ["failed"]);
    expect(failed.error?.message).toContain("may hold only letters, digits");
  });

  it("pages a tag filter with the cursor and narrows listFailures by tag", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await definitions().start({ database: await database(), clock }));
    for (let i = 0; i < 7; i++) {
      const customer = i % 2 ? "c-9" : "c-1";
      const run = await engine.getOrCreate(
        "invoice",
        `inv-${i}`,
        { fail: customer === "c-9" ? "card declined" : "address unknown" },
        { tags: { customer } },
      );
      await driveRun(engine, clock, run, ["failed"]);
      clock.advance(1000);
    }
    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await engine.listRuns({
        tags: { customer: "c-1" },
        limit: 3,
        ...(cursor ? { cursor } : {}),
      });
      keys.push(...page.runs.map((r) => r.key));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(keys).toEqual(["inv-6", "inv-4", "inv-2", "inv-0"]);

    const all = await engine.listFailures();
    expect(all.scanned).toBe(7);
    const c9 = await engine.listFailures({ tags: { customer: "c-9" } });
    expect(c9.scanned).toBe(3);
    expect(c9.failures.map((f) => [f.example, f.count, f.keys])).toEqual([
      ["card declined", 3, ["inv-5", "inv-3", "inv-1"]],
    ]);
  });
});

it("refuses an own __proto__ tag, counts a value's length in characters (code points), and says a filter's own limit", async () => {
  const engine = closeLater(
    await setup({ use: { t: workflow({ run: async () => "ok" }) } }).start({
      database: tempDb(),
      maxActiveRuns: 0,
    }),
  );
  const proto = JSON.parse('{"__proto__":"x","customer":"c-1"}');
  await expect(engine.getOrCreate("t", "p", {}, { tags: proto })).rejects.toMatchObject({
    code: "INVALID_TAG",
  });
  await expect(engine.listRuns({ tags: proto })).rejects.toMatchObject({ code: "INVALID_TAG" });
  const emoji = "😀".repeat(256);
  const h = await engine.getOrCreate("t", "e", {}, { tags: { face: emoji } });
  expect((await engine.info(h)).tags).toEqual({ face: emoji });
  await expect(engine.getOrCreate("t", "e2", {}, { tags: { face: `${emoji}😀` } })).rejects.toThrow(
    "has 257 characters",
  );
  const many = Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`t${i}`, "v"]));
  await expect(engine.listRuns({ tags: many })).rejects.toThrow("a filter names at most 20 tags");
});
