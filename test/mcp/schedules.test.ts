// list_schedules, pause_schedule and resume_schedule through a real SDK client, on SQLite and PostgreSQL:
// next due times, the last run and its status, pausing from an attached server (no code) that the executing
// engine obeys, and --read-only hiding the two writes.

import { afterEach, describe, expect, test } from "vitest";
import { internals } from "../../src/engine/engine.js";
import { attach, FakeClock, setup, workflow } from "../../src/index.js";
import { tempSchema } from "../postgres/pg.js";
import { Closer, call, connect, tempDb, text } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const report = workflow({ run: async (_ctx, input: { day: string }) => ({ reported: input.day }) });
const registry = setup({
  use: { report },
  schedules: {
    nightly: {
      workflow: "report",
      cron: "0 3 * * *",
      timezone: "Europe/Berlin",
      input: (at: Date) => ({ day: at.toISOString().slice(0, 10) }),
    },
  },
});

describe.each([
  { name: "sqlite", database: async () => tempDb(closer) },
  { name: "postgres", database: async () => (await tempSchema()).url },
])("schedule tools on $name", ({ database }) => {
  test("list_schedules shows the next due time and the last run with its status; pause and resume from an attached server", async () => {
    const db = await database();
    const clock = new FakeClock(Date.parse("2026-12-01T12:00:00Z"));
    const engine = await registry.start({ database: db, clock });
    closer.add(() => engine.close());
    const reader = await attach({ database: db, clock });
    closer.add(() => reader.close());
    const client = await connect(closer, internals(reader));

    const before = await call(client, "list_schedules");
    expect(before.structuredContent!.schedules).toEqual([
      {
        name: "nightly",
        workflow: "report",
        spec: { cron: "0 3 * * *", timezone: "Europe/Berlin", overlap: "skip", catchUp: "latest" },
        nextDue: "2026-12-02T02:00:00.000Z",
        paused: false,
        orphaned: false,
        last: null,
        lastRun: null,
      },
    ]);
    expect(text(before)).toContain(
      '- nightly: report, cron "0 3 * * *" (Europe/Berlin); next 2026-12-02T02:00:00.000Z; never fired',
    );

    clock.set(Date.parse("2026-12-02T02:00:00Z"));
    await engine.tick();
    await (await engine.get("report", "nightly@2026-12-02T02:00:00.000Z")).result({ timeout: 5000 });
    const after = await call(client, "list_schedules");
    expect(after.structuredContent!.schedules[0]).toMatchObject({
      nextDue: "2026-12-03T02:00:00.000Z",
      last: { due: "2026-12-02T02:00:00.000Z", outcome: "started" },
      lastRun: { key: "nightly@2026-12-02T02:00:00.000Z", status: "completed" },
    });
    expect(text(after)).toContain(
      "last 2026-12-02T02:00:00.000Z started → run report/nightly@2026-12-02T02:00:00.000Z completed",
    );

    // Paused by the attached server: the executing engine fires nothing.
    const paused = await call(client, "pause_schedule", { name: "nightly" });
    expect(paused.isError).toBeFalsy();
    expect(paused.structuredContent!.schedule).toMatchObject({ paused: true, nextDue: null });
    expect(text(paused)).toContain("Schedule nightly paused.");
    clock.set(Date.parse("2026-12-03T02:00:00Z"));
    await engine.tick();
    expect(await engine.findRun("report", "nightly@2026-12-03T02:00:00.000Z")).toBeUndefined();

    // Resumed there too: the engine with the code computes the next firing after now.
    clock.set(Date.parse("2026-12-03T12:00:00Z"));
    const resumed = await call(client, "resume_schedule", { name: "nightly" });
    expect(resumed.structuredContent!.schedule).toMatchObject({ paused: false });
    clock.advance(1000); // the engine looks at the table at least once a second (sooner on a noticed commit)
    await engine.tick();
    expect((await engine.schedules.list())[0]!.nextDue).toBe("2026-12-04T02:00:00.000Z");
    expect(text(await call(client, "list_schedules"))).toContain("next 2026-12-04T02:00:00.000Z");

    const missing = await call(client, "pause_schedule", { name: "nigthly" });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain('There is no schedule "nigthly". Known schedules: "nightly"');
  });
});

test("--read-only lists schedules but offers neither pause_schedule nor resume_schedule", async () => {
  const clock = new FakeClock(Date.parse("2026-12-01T12:00:00Z"));
  const engine = await registry.start({ database: tempDb(closer), clock });
  closer.add(() => engine.close());
  const client = await connect(closer, internals(engine), { readOnly: true });
  const names = (await client.listTools()).tools.map((t) => t.name);
  expect(names).toContain("list_schedules");
  expect(names).not.toContain("pause_schedule");
  expect(names).not.toContain("resume_schedule");
  const refused = await call(client, "pause_schedule", { name: "nightly" });
  expect(refused.isError).toBe(true);
  expect((await engine.schedules.list())[0]!.paused).toBe(false);
});
