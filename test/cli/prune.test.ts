// `waymark prune` as a child process, on SQLite and PostgreSQL: a dry run counts by workflow and status and
// deletes nothing; --status narrows; a real run deletes exactly the old finished runs and says what it deleted;
// usage errors exit 2 with the fix. The runs were made with a FakeClock set weeks back (the CLI uses the real clock).

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import { FakeClock, FatalError, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";
import { waymark } from "./run-check.js";

const DAY = 86_400_000;
const prune = (args: string[]) => waymark(["prune", ...args]);

const invoice = workflow({
  run: async (ctx, input: { fail: boolean }) => {
    await ctx.step("charge", () => {
      if (input.fail) throw new FatalError("card declined");
    });
  },
});
const approval = workflow({
  queues: { decide: z.object({}) },
  run: async (ctx) => {
    await ctx.queue.next("wait", { queue: "decide" });
  },
});

describe.each([
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
])("waymark prune on $name", ({ database }) => {
  it("counts by workflow and status in a dry run, then deletes exactly the old finished runs", {
    timeout: 120_000,
  }, async () => {
    const db = await database();
    const clock = new FakeClock(Date.now() - 40 * DAY);
    const engine = closeLater(await setup({ use: { invoice, approval } }).start({ database: db, clock }));
    const finished = async (key: string, fail: boolean) =>
      waitForStatus(engine, await engine.getOrCreate("invoice", key, { fail }), ["completed", "failed"]);
    await finished("old-1", false);
    await finished("old-2", false);
    await finished("old-bad", true);
    const waiting = await engine.getOrCreate("approval", "a-1"); // unfinished: never pruned
    await waitForStatus(engine, waiting, ["waiting"]);
    clock.set(Date.now() - 10 * DAY);
    await finished("new-1", false);
    await engine.close();
    const keys = async () => {
      const reader = closeLater(await setup({ use: {} }).start({ database: db, deployCheck: false }));
      const page = await reader.listRuns({ limit: 100 });
      await reader.close();
      return page.runs.map((r) => r.key).sort();
    };
    const all = ["a-1", "new-1", "old-1", "old-2", "old-bad"];

    const dry = await prune(["--older-than", "30d", "--dry-run", "--db", db]);
    expect(dry.stderr).toBe("");
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/^Would delete 3 runs finished more than 30d ago from .+:\n/);
    expect(dry.stdout).toContain("  invoice  completed  2\n  invoice  failed     1\n");
    expect(dry.stdout).toContain("Run it again without --dry-run to delete them.");
    expect(await keys()).toEqual(all);
    const nosuch = await prune(["--older-than", "30d", "--workflow", "nosuch", "--dry-run", "--db", db]);
    expect(nosuch.code).toBe(0);
    expect(nosuch.stderr).toContain('warning: no run of workflow "nosuch" exists in');
    expect(nosuch.stderr).toMatch(/workflows with runs: (approval, invoice|invoice, approval)\./);

    const failedOnly = await prune([
      "--older-than",
      "30d",
      "--status",
      "failed",
      "--dry-run",
      "--db",
      db,
      "--json",
    ]);
    expect(JSON.parse(failedOnly.stdout)).toEqual({
      dryRun: true,
      total: 1,
      runs: [{ workflow: "invoice", status: "failed", count: 1 }],
    });

    const real = await prune(["--older-than", "30d", "--db", db]);
    expect(real.stderr).toBe("");
    expect(real.code).toBe(0);
    expect(real.stdout).toMatch(/^Deleted 3 runs finished more than 30d ago from .+:\n/);
    expect(await keys()).toEqual(["a-1", "new-1"]);

    const again = await prune(["--older-than", "30d", "--db", db]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/^No finished runs older than 30d to delete in /);
    const younger = await prune(["--older-than", "1w", "--db", db]);
    expect(younger.stdout).toMatch(/^Deleted 1 run finished more than 1w ago/);
    expect(await keys()).toEqual(["a-1"]);

    // The real prunes are in the audit (dry runs only read), with the CLI's user and pid; pruning keeps it.
    const reader = closeLater(await setup({ use: {} }).start({ database: db, deployCheck: false }));
    const audit = (await reader.audit.list({ surface: "cli" })).entries;
    expect(audit.map((e) => [e.action, (e.args as { olderThan: string }).olderThan, e.outcome.ok])).toEqual([
      ["prune", "1w", true],
      ["prune", "30d", true],
      ["prune", "30d", true],
    ]);
    expect(audit[0]!.client).toMatchObject({ name: "waymark prune", pid: expect.any(Number) });
  });
});

it("refuses bad usage and a missing database, saying what to do", async () => {
  const none = await prune(["--db", tempDb()]);
  expect(none.code).toBe(2);
  expect(none.stderr).toContain("--older-than is required, e.g. --older-than 30d.");
  const soon = await prune(["--older-than", "soon", "--db", tempDb()]);
  expect(soon.code).toBe(2);
  expect(soon.stderr).toContain('Invalid --older-than "soon": use milliseconds');
  const status = await prune(["--older-than", "30d", "--status", "running", "--db", tempDb()]);
  expect(status.code).toBe(2);
  expect(status.stderr).toContain(
    "--status running: only finished runs are pruned; use completed, failed or cancelled.",
  );
  const missing = await prune(["--older-than", "30d", "--db", tempDb()]);
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain("There is no database at");
  expect(missing.stderr).toContain("waymark prune deletes from an existing database and creates none");
  expect(missing.stderr).not.toContain("server");
  const help = await prune(["--help"]);
  expect(help.code).toBe(0);
  expect(help.stdout).toContain("Usage: waymark prune --older-than <duration>");
});
