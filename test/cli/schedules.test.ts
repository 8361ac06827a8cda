// `waymark schedules` as a child process, on SQLite and PostgreSQL: the list (next due, last run and its
// status, orphaned), pause and resume (the executing engine obeys), and usage errors with the fix.

import path from "node:path";
import { describe, expect, it } from "vitest";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";
import { waymark } from "./run-check.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

const schedules = (args: string[]) => waymark(["schedules", ...args]);

const report = workflow({ run: async () => "ok" });

describe.each([
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
])("waymark schedules on $name", ({ database }) => {
  it("lists, pauses and resumes; the engine that runs the schedule obeys", { timeout: 120_000 }, async () => {
    const db = await database();
    const clock = new FakeClock(Date.parse("2026-12-01T00:30:00Z"));
    const engine = closeLater(
      await setup({ use: { report }, schedules: { hourly: { workflow: "report", every: "1h" } } }).start({
        database: db,
        clock,
      }),
    );
    clock.set(Date.parse("2026-12-01T01:00:00Z"));
    await engine.tick();
    await (await engine.get("report", "hourly@2026-12-01T01:00:00.000Z")).result({ timeout: 5000 });

    const listed = await schedules(["--db", db]);
    expect(listed.stderr).toBe("");
    expect(listed.code).toBe(0);
    expect(listed.stdout).toBe(
      '- hourly: report, every "1h"; next 2026-12-01T02:00:00.000Z; last 2026-12-01T01:00:00.000Z started → run report/hourly@2026-12-01T01:00:00.000Z completed\n',
    );
    const json = JSON.parse((await schedules(["list", "--db", db, "--json"])).stdout);
    expect(json).toMatchObject([
      { name: "hourly", nextDue: "2026-12-01T02:00:00.000Z", lastRun: { status: "completed" } },
    ]);

    const paused = await schedules(["pause", "hourly", "--db", db]);
    expect(paused.code).toBe(0);
    expect(paused.stdout).toMatch(/^Schedule hourly paused\.\n- hourly: report, every "1h"; paused; last /);
    clock.set(Date.parse("2026-12-01T02:00:00Z"));
    await engine.tick();
    expect(await engine.findRun("report", "hourly@2026-12-01T02:00:00.000Z")).toBeUndefined();

    expect((await schedules(["resume", "hourly", "--db", db])).code).toBe(0);
    clock.set(Date.parse("2026-12-01T02:30:00Z"));
    await engine.tick();
    expect((await engine.schedules.list())[0]).toMatchObject({
      paused: false,
      nextDue: "2026-12-01T03:00:00.000Z",
    });

    const missing = await schedules(["pause", "hourli", "--db", db]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('There is no schedule "hourli". Known schedules: "hourly"');

    // Every pause and resume is in the audit, the refused one too, with the CLI's user and pid.
    const audit = (await engine.audit.list({ surface: "cli" })).entries;
    expect(audit.map((e) => [e.action, e.args, e.outcome.ok ? "ok" : e.outcome.code])).toEqual([
      ["pause_schedule", { name: "hourli" }, "SCHEDULE_NOT_FOUND"],
      ["resume_schedule", { name: "hourly" }, "ok"],
      ["pause_schedule", { name: "hourly" }, "ok"],
    ]);
    for (const e of audit) {
      expect(e.client).toMatchObject({ name: "waymark schedules", pid: expect.any(Number) });
      expect(e.client.pid).not.toBe(process.pid);
      expect(typeof e.client.user).toBe("string");
    }
  });
});

it("refuses bad usage and a missing database, saying what to do", async () => {
  const bad = await schedules(["stop", "x", "--db", tempDb()]);
  expect(bad.code).toBe(2);
  expect(bad.stderr).toContain('unknown subcommand "stop"; use list, pause <name> or resume <name>.');
  const noName = await schedules(["pause"]);
  expect(noName.code).toBe(2);
  expect(noName.stderr).toContain("pause takes one schedule name.");
  const none = await schedules(["--db", path.join(ROOT, "no-such.db")]);
  expect(none.code).toBe(1);
  expect(none.stderr).toContain("There is no database at");
});
