// Tags over MCP through a real SDK client: start_run stores them, get_run and list_runs show them, list_runs
// filters by them (ANDed, paged with its cursor), list_failures is narrowed by them, and a tag past a limit is
// an isError result naming it. On SQLite and PostgreSQL.

import { afterEach, describe, expect, it } from "vitest";
import { driveRun } from "../../fixtures/wait.js";
import type { Engine } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { tempSchema } from "../postgres/pg.js";
import { Closer, call, connect, tempDb, text } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const DATABASES = [
  { name: "sqlite", database: async () => tempDb(closer) },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

const order = workflow({
  run: async (ctx, input: { fail?: string; tier?: string }) => {
    await ctx.step("classify", (s) => {
      if (input.tier) s.tag("tier", input.tier);
    });
    if (input.fail) await ctx.step("charge", () => Promise.reject(new Error(input.fail)), { retries: 0 });
    return "done";
  },
});

async function start(database: string) {
  const clock = new FakeClock();
  const engine = (await setup({ use: { order } }).start({ database, clock })) as unknown as Engine;
  closer.add(() => engine.close());
  return { engine, clock, client: await connect(closer, engine) };
}

describe.each(DATABASES)("tags over MCP on $name", ({ database }) => {
  it("start_run stores tags; get_run and list_runs show them; list_runs filters by them with its cursor", async () => {
    const { engine, clock, client } = await start(await database());
    for (let i = 0; i < 5; i++) {
      const r = await call(client, "start_run", {
        workflow: "order",
        key: `o-${i}`,
        input: { tier: i < 3 ? "gold" : "silver" },
        tags: { customer: i % 2 ? "c-9" : "c-1", region: "eu" },
      });
      expect(r.isError).toBeFalsy();
      // The creation tags are there; the run may already have run "classify" (tier) before the answer is read.
      expect(r.structuredContent!.run.tags).toMatchObject({ customer: i % 2 ? "c-9" : "c-1", region: "eu" });
      await driveRun(engine, clock, await engine.get("order", `o-${i}`), ["completed"]);
      clock.advance(1000);
    }
    const got = await call(client, "get_run", { workflow: "order", key: "o-1" });
    expect(got.structuredContent!.tags).toEqual({ customer: "c-9", region: "eu", tier: "gold" });
    expect(text(got)).toContain("Tags: customer=c-9, region=eu, tier=gold.");

    const keys: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await call(client, "list_runs", {
        tags: { customer: "c-1", region: "eu" },
        limit: 2,
        ...(cursor ? { cursor } : {}),
      });
      expect(page.isError).toBeFalsy();
      keys.push(...page.structuredContent!.runs.map((r: { key: string }) => r.key));
      cursor = page.structuredContent!.nextCursor ?? undefined;
    } while (cursor);
    expect(keys).toEqual(["o-4", "o-2", "o-0"]);
    const gold = await call(client, "list_runs", { tags: { tier: "gold", customer: "c-1" } });
    expect(gold.structuredContent!.runs.map((r: { key: string }) => r.key)).toEqual(["o-2", "o-0"]);
    expect(text(gold)).toContain("order/o-2 [completed] v1");
    expect(text(gold)).toContain("{customer=c-1, region=eu, tier=gold}");
    const none = await call(client, "list_runs", { tags: { customer: "c-404" } });
    expect(none.structuredContent!.runs).toEqual([]);
  });

  it("list_failures narrowed by a tag answers what fails for one customer", async () => {
    const { engine, clock, client } = await start(await database());
    const fails: Array<[string, string, string]> = [
      ["a", "c-9", "card declined"],
      ["b", "c-9", "card declined"],
      ["c", "c-1", "address unknown"],
    ];
    for (const [key, customer, fail] of fails) {
      await call(client, "start_run", { workflow: "order", key, input: { fail }, tags: { customer } });
      await driveRun(engine, clock, await engine.get("order", key), ["failed"]);
      clock.advance(1000);
    }
    const all = await call(client, "list_failures", {});
    expect(all.structuredContent!.scanned).toBe(3);
    const c9 = await call(client, "list_failures", { tags: { customer: "c-9" } });
    expect(c9.structuredContent!.scanned).toBe(2);
    expect(
      c9.structuredContent!.failures.map((f: { example: string; keys: string[] }) => [f.example, f.keys]),
    ).toEqual([["card declined", ["b", "a"]]]);
    const nobody = await call(client, "list_failures", { tags: { customer: "c-404" } });
    expect(text(nobody)).toContain("tagged customer=c-404");
  });

  it("a tag past a limit is refused naming it, and no run is created", async () => {
    const { engine, client } = await start(await database());
    const long = await call(client, "start_run", {
      workflow: "order",
      key: "x",
      input: {},
      tags: { customer: "v".repeat(300) },
    });
    expect(long.isError).toBe(true);
    expect(text(long)).toMatch(/^TAG_LIMIT_EXCEEDED: .*has 300 characters; the limit is 256/);
    const many = await call(client, "start_run", {
      workflow: "order",
      key: "x",
      input: {},
      tags: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`t${i}`, "v"])),
    });
    expect(text(many)).toMatch(/^TAG_LIMIT_EXCEEDED: .*at most 20 tags/);
    expect(await engine.findRun("order", "x")).toBeUndefined();
    const filter = await call(client, "list_runs", { tags: { "bad name": "v" } });
    expect(filter.isError).toBe(true);
    expect(text(filter)).toMatch(/^INVALID_TAG: /);
  });
});

it("list_runs shows tags compactly (5 at most, values cut, +N more), so a page of runs with 20 long tags holds many runs; get_run has them all", async () => {
  const { client } = await start(tempDb(closer));
  const tags = Object.fromEntries(Array.from({ length: 20 }, (_, i) => [`tag${i}`, "v".repeat(200)]));
  for (let i = 0; i < 60; i++) {
    const r = await call(client, "start_run", { workflow: "order", key: `t-${i}`, input: {}, tags });
    expect(r.isError).toBeFalsy();
  }
  const page = await call(client, "list_runs", { limit: 100 });
  expect(page.isError).toBeFalsy();
  expect(page.structuredContent!.runs.length).toBeGreaterThanOrEqual(20);
  const first = page.structuredContent!.runs[0];
  expect(Object.keys(first.tags)).toHaveLength(5);
  expect(first.tags.tag1.length).toBeLessThanOrEqual(41);
  expect(first.moreTags).toBe(15);
  expect(text(page)).toContain("+15 more tags (get_run)");
  const got = await call(client, "get_run", { workflow: "order", key: "t-0" });
  expect(got.structuredContent!.tags).toEqual(tags);
});
