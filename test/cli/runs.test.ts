// `waymark runs` as a child process on SQLite and PostgreSQL: filters by workflow, status and tags (exact,
// ANDed), --json, and usage errors that exit 2 with the fix.

import { describe, expect, it } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { FatalError, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";
import { waymark } from "./run-check.js";

const runs = (args: string[]) => waymark(["runs", ...args]);

const invoice = workflow({
  run: async (ctx, input: { fail: boolean }) => {
    await ctx.step("charge", () => {
      if (input.fail) throw new FatalError("card declined");
    });
  },
});

describe.each([
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
])("waymark runs on $name", ({ database }) => {
  it("lists runs filtered by workflow, status and tags", { timeout: 120_000 }, async () => {
    const db = await database();
    const engine = closeLater(await setup({ use: { invoice } }).start({ database: db }));
    const make = async (key: string, fail: boolean, tags: Record<string, string>) =>
      waitForStatus(engine, await engine.getOrCreate("invoice", key, { fail }, { tags }), [
        "completed",
        "failed",
      ]);
    await make("i-1", false, { customer: "c-9", region: "eu" });
    await make("i-2", true, { customer: "c-9", region: "us" });
    await make("i-3", false, { customer: "c-7", region: "eu" });
    await engine.close();

    const tagged = await runs(["--tag", "customer=c-9", "--db", db]);
    expect(tagged.stderr).toBe("");
    expect(tagged.code).toBe(0);
    expect(tagged.stdout).toContain("invoice/i-1 [completed]");
    expect(tagged.stdout).toContain("invoice/i-2 [failed]");
    expect(tagged.stdout).toContain("card declined");
    expect(tagged.stdout).not.toContain("i-3");

    const both = await runs(["--tag", "customer=c-9", "--tag", "region=eu", "--json", "--db", db]);
    expect(both.code).toBe(0);
    const parsed = JSON.parse(both.stdout) as { runs: { key: string; tags: Record<string, string> }[] };
    expect(parsed.runs.map((r) => r.key)).toEqual(["i-1"]);
    expect(parsed.runs[0]!.tags).toEqual({ customer: "c-9", region: "eu" });

    const failed = await runs(["--status", "failed", "--workflow", "invoice", "--db", db]);
    expect(failed.stdout.trim().split("\n")).toHaveLength(1);
    expect(failed.stdout).toContain("invoice/i-2");

    const none = await runs(["--tag", "customer=nobody", "--db", db]);
    expect(none.stdout).toBe("No runs match.\n");
  });
});

it("refuses bad usage with the fix and exit 2", { timeout: 60_000 }, async () => {
  const db = tempDb();
  const noEq = await runs(["--tag", "customer", "--db", db]);
  expect(noEq.code).toBe(2);
  expect(noEq.stderr).toContain("write it as name=value");
  const twice = await runs(["--tag", "a=1", "--tag", "a=2", "--db", db]);
  expect(twice.code).toBe(2);
  expect(twice.stderr).toContain("given twice");
  const status = await runs(["--status", "done", "--db", db]);
  expect(status.code).toBe(2);
  expect(status.stderr).toContain("statuses are");
  const limit = await runs(["--limit", "0", "--db", db]);
  expect(limit.code).toBe(2);
  expect(limit.stderr).toContain("from 1 to 1000");
});
