// Schedules on SQLite and PostgreSQL: setup's checks, one run per firing keyed by its due time (once across a
// restart), cron with a time zone and daylight-saving nights, intervals, overlap, catch-up after an outage over
// a week of FakeClock time, pause and resume, orphaned schedules. Every test drives time with FakeClock and tick().

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import type { ScheduleCatchUp } from "../../src/engine/schedule-spec.js";
import { InvalidScheduleError, ScheduleNotFoundError } from "../../src/errors.js";
import { attach, FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const HOUR = 3_600_000;

const report = workflow({
  run: async (_ctx, input: { day: string }) => ({ reported: input.day }),
});
/** Waits on a queue: unfinished until told. */
const held = workflow({
  queues: { go: z.object({}) },
  run: async (ctx) => {
    await ctx.queue.next("hold", { queue: "go" });
    return "done";
  },
});

const nightly = (extra: Record<string, unknown> = {}) => ({
  nightly: {
    workflow: "report" as const,
    cron: "0 3 * * *",
    timezone: "Europe/Berlin",
    input: (at: Date) => ({ day: at.toISOString().slice(0, 10) }),
    ...extra,
  },
});

const DATABASES = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

describe("setup({ schedules }) refuses what cannot fire, with the fix", () => {
  const bad: Array<[string, Record<string, unknown>, RegExp]> = [
    [
      "an invalid cron",
      { workflow: "report", cron: "61 * * * *" },
      /cron "61 \* \* \* \*" is invalid.*minute.*"0 3 \* \* \*"/,
    ],
    [
      "an invalid time zone",
      { workflow: "report", cron: "0 3 * * *", timezone: "Mars/Base" },
      /timezone "Mars\/Base" is not an IANA time zone; use a name like "Europe\/Berlin"/,
    ],
    [
      "both cron and every",
      { workflow: "report", cron: "0 3 * * *", every: "15m" },
      /either cron or every, not both/,
    ],
    [
      "neither cron nor every",
      { workflow: "report" },
      /say when it fires: cron: "0 3 \* \* \*".*or every: "15m"/,
    ],
    [
      "an unknown workflow",
      { workflow: "nope", every: "1h" },
      /workflow "nope" is not in setup\(\{ use \}\); name one of "report"/,
    ],
    ["a bad interval", { workflow: "report", every: "soon" }, /Invalid every interval "soon"/],
    ["a sub-second interval", { workflow: "report", every: 10 }, /shorter than a second/],
    [
      "a bad overlap",
      { workflow: "report", every: "1h", overlap: "queue" },
      /overlap "queue" is not "skip" or "allow"/,
    ],
    [
      "a bad catchUp",
      { workflow: "report", every: "1h", catchUp: "some" },
      /catchUp "some" is not "latest", "all" or "none"/,
    ],
    [
      "a timezone with every",
      { workflow: "report", every: "1h", timezone: "UTC" },
      /timezone applies to cron only/,
    ],
    ["an unknown option", { workflow: "report", every: "1h", when: 1 }, /unknown option "when"/],
  ];
  for (const [what, schedule, message] of bad) {
    it(`refuses ${what}`, () => {
      let err: unknown;
      try {
        setup({ use: { report }, schedules: { s: schedule as never } });
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InvalidScheduleError);
      expect((err as InvalidScheduleError).code).toBe("INVALID_SCHEDULE");
      expect((err as Error).message).toMatch(/^Schedule "s": /);
      expect((err as Error).message).toMatch(message);
    });
  }
  it('refuses a name with "@" (run keys are name@due)', () => {
    expect(() =>
      setup({ use: { report }, schedules: { "a@b": { workflow: "report", every: "1h" } } }),
    ).toThrow(/cannot contain "@"/);
  });
});

describe.each(DATABASES)("schedules on $name", ({ database }) => {
  it("a cron firing in its time zone creates one run keyed by its due time, once across a restart", async () => {
    const db = await database();
    const clock = new FakeClock(Date.parse("2026-12-01T12:00:00Z"));
    const registry = setup({ use: { report }, schedules: nightly() });
    const engine = closeLater(await registry.start({ database: db, clock }));
    const [listed] = await engine.schedules.list();
    expect(listed).toMatchObject({
      name: "nightly",
      workflow: "report",
      spec: { cron: "0 3 * * *", timezone: "Europe/Berlin", overlap: "skip", catchUp: "latest" },
      nextDue: "2026-12-02T02:00:00.000Z", // 03:00 in Berlin (CET)
      paused: false,
      orphaned: false,
      last: null,
      lastRun: null,
    });
    clock.set(Date.parse("2026-12-02T01:59:59.999Z"));
    await engine.tick();
    expect((await engine.listRuns()).runs).toEqual([]);
    clock.set(Date.parse("2026-12-02T02:00:00Z"));
    await engine.tick();
    const run = await engine.get("report", "nightly@2026-12-02T02:00:00.000Z");
    expect(await run.result({ timeout: 5000 })).toEqual({ reported: "2026-12-02" });
    const [after] = await engine.schedules.list();
    expect(after).toMatchObject({
      nextDue: "2026-12-03T02:00:00.000Z",
      last: { due: "2026-12-02T02:00:00.000Z", outcome: "started" },
      lastRun: { id: run.id, key: "nightly@2026-12-02T02:00:00.000Z", status: "completed" },
    });
    await engine.close();

    // Restarted within the same minute: the firing is not repeated.
    const again = closeLater(await registry.start({ database: db, clock }));
    await again.tick();
    expect((await again.listRuns()).runs.map((r) => r.key)).toEqual(["nightly@2026-12-02T02:00:00.000Z"]);
    // An attached reader lists it too.
    await again.close();
    const reader = closeLater(await attach({ database: db, clock }));
    expect((await reader.schedules.list())[0]).toMatchObject({
      name: "nightly",
      nextDue: "2026-12-03T02:00:00.000Z",
    });
  });

  it("every: an interval aligned on the epoch, each firing its own run", async () => {
    const clock = new FakeClock(Date.parse("2026-12-01T10:07:00Z"));
    const engine = closeLater(
      await setup({
        use: { report },
        schedules: { quarter: { workflow: "report", every: "15m", input: { day: "any" } } },
      }).start({ database: await database(), clock }),
    );
    expect((await engine.schedules.list())[0]!.nextDue).toBe("2026-12-01T10:15:00.000Z");
    for (let t = Date.parse("2026-12-01T10:08:00Z"); t <= Date.parse("2026-12-01T11:00:00Z"); t += 60_000) {
      clock.set(t);
      await engine.tick();
      // A firing's run finishes in real time (its commits are I/O); the next firing would skip it unfinished.
      if (t % (15 * 60_000) === 0) {
        const key = `quarter@${new Date(t).toISOString()}`;
        await waitForStatus(engine, await engine.get("report", key), ["completed"]);
      }
    }
    const keys = (await engine.listRuns()).runs.map((r) => r.key).sort();
    expect(keys).toEqual([
      "quarter@2026-12-01T10:15:00.000Z",
      "quarter@2026-12-01T10:30:00.000Z",
      "quarter@2026-12-01T10:45:00.000Z",
      "quarter@2026-12-01T11:00:00.000Z",
    ]);
  });

  it('overlap "skip" records a firing skipped while the previous run is unfinished; "allow" starts it', async () => {
    const clock = new FakeClock(Date.parse("2026-12-01T00:30:00Z"));
    const engine = closeLater(
      await setup({
        use: { held },
        schedules: {
          skipping: { workflow: "held", every: "1h" },
          allowing: { workflow: "held", every: "1h", overlap: "allow" },
        },
      }).start({ database: await database(), clock }),
    );
    clock.set(Date.parse("2026-12-01T01:00:00Z"));
    await engine.tick();
    const first = await engine.get("held", "skipping@2026-12-01T01:00:00.000Z");
    await waitForStatus(engine, first, ["waiting"]);
    clock.set(Date.parse("2026-12-01T02:00:00Z"));
    await engine.tick();
    const keys = (await engine.listRuns()).runs.map((r) => r.key).sort();
    expect(keys).toEqual([
      "allowing@2026-12-01T01:00:00.000Z",
      "allowing@2026-12-01T02:00:00.000Z",
      "skipping@2026-12-01T01:00:00.000Z",
    ]);
    const skipping = (await engine.schedules.list()).find((s) => s.name === "skipping")!;
    expect(skipping).toMatchObject({
      nextDue: "2026-12-01T03:00:00.000Z",
      last: { due: "2026-12-01T02:00:00.000Z", outcome: "skipped" },
      lastRun: { id: first.id, status: "waiting" },
    });
    // Once the previous run finished, the next firing starts again.
    await engine.send(first, "go", {});
    await first.result({ timeout: 5000 });
    clock.set(Date.parse("2026-12-01T03:00:00Z"));
    await engine.tick();
    expect(await engine.findRun("held", "skipping@2026-12-01T03:00:00.000Z")).toBeDefined();
  });

  // A week of a nightly schedule (03:00 Berlin = 02:00 UTC in winter), the process down from Wednesday noon
  // to Saturday noon (Dec 3, 4 and 5 missed), driven hour by hour.
  const WEEK: Array<[ScheduleCatchUp, string[]]> = [
    ["all", ["11-30", "12-01", "12-02", "12-03", "12-04", "12-05", "12-06"]],
    ["latest", ["11-30", "12-01", "12-02", "12-05", "12-06"]],
    ["none", ["11-30", "12-01", "12-02", "12-06"]],
  ];
  for (const [catchUp, days] of WEEK) {
    it(`catchUp "${catchUp}" after an outage in a week of firings`, async () => {
      const db = await database();
      const clock = new FakeClock(Date.parse("2026-11-30T00:00:00Z"));
      const registry = setup({ use: { report }, schedules: nightly({ catchUp, overlap: "allow" }) });
      const drive = async (from: string, to: string) => {
        const engine = closeLater(await registry.start({ database: db, clock }));
        for (let t = Date.parse(from); t <= Date.parse(to); t += HOUR) {
          clock.set(t);
          await engine.tick();
        }
        await engine.close();
      };
      await drive("2026-11-30T00:00:00Z", "2026-12-02T12:00:00Z");
      clock.set(Date.parse("2026-12-05T12:00:00Z")); // down meanwhile
      await drive("2026-12-05T12:00:00Z", "2026-12-06T23:00:00Z");
      const reader = closeLater(await attach({ database: db, clock }));
      const keys = (await reader.listRuns({ limit: 100 })).runs.map((r) => r.key).sort();
      expect(keys).toEqual(days.map((d) => `nightly@2026-${d}T02:00:00.000Z`));
    });
  }

  it("daylight saving in Europe/Berlin: as croner defines it, on a spring-forward and a fall-back night", async () => {
    const clock = new FakeClock(Date.parse("2026-03-27T12:00:00Z"));
    const engine = closeLater(
      await setup({
        use: { report },
        schedules: {
          // catchUp "none": the months skipped between the two nights fire nothing.
          three: {
            workflow: "report",
            cron: "0 3 * * *",
            timezone: "Europe/Berlin",
            input: { day: "" },
            catchUp: "none",
          },
          // 02:30 does not exist on the spring night and happens twice on the autumn one.
          halfTwo: {
            workflow: "report",
            cron: "30 2 * * *",
            timezone: "Europe/Berlin",
            input: { day: "" },
            catchUp: "none",
          },
        },
      }).start({ database: await database(), clock }),
    );
    const drive = async (from: string, to: string) => {
      for (let t = Date.parse(from); t <= Date.parse(to); t += 15 * 60_000) {
        clock.set(t);
        await engine.tick();
        // A quarter of an hour passes: the event loop turns, so a run fired now has finished before the next
        // firing (with overlap "skip" a run still executing would skip it).
        await new Promise((resolve) => setImmediate(resolve));
      }
    };
    await drive("2026-03-27T12:00:00Z", "2026-03-30T12:00:00Z");
    await drive("2026-10-23T12:00:00Z", "2026-10-26T12:00:00Z");
    const keys = (await engine.listRuns({ limit: 100 })).runs.map((r) => r.key).sort();
    expect(keys).toEqual([
      // spring: 02:30 missing on Mar 29 fires at 03:00 CEST (01:00Z), as 03:00 does
      "halfTwo@2026-03-28T01:30:00.000Z",
      "halfTwo@2026-03-29T01:00:00.000Z",
      "halfTwo@2026-03-30T00:30:00.000Z",
      // autumn: the repeated 02:30 on Oct 25 fires once (the first, CEST)
      "halfTwo@2026-10-24T00:30:00.000Z",
      "halfTwo@2026-10-25T00:30:00.000Z",
      "halfTwo@2026-10-26T01:30:00.000Z",
      "three@2026-03-28T02:00:00.000Z",
      "three@2026-03-29T01:00:00.000Z",
      "three@2026-03-30T01:00:00.000Z",
      "three@2026-10-24T01:00:00.000Z",
      "three@2026-10-25T02:00:00.000Z",
      "three@2026-10-26T02:00:00.000Z",
    ]);
  });

  it("pause stops firings, resume fires from the next one after now (those missed while paused are not run)", async () => {
    const clock = new FakeClock(Date.parse("2026-12-01T12:00:00Z"));
    const engine = closeLater(
      await setup({ use: { report }, schedules: nightly() }).start({ database: await database(), clock }),
    );
    expect(await engine.schedules.pause("nightly")).toMatchObject({ paused: true, nextDue: null });
    clock.set(Date.parse("2026-12-02T02:00:00Z"));
    await engine.tick();
    clock.set(Date.parse("2026-12-03T12:00:00Z"));
    await engine.tick();
    expect((await engine.listRuns()).runs).toEqual([]);
    expect(await engine.schedules.resume("nightly")).toMatchObject({
      paused: false,
      nextDue: "2026-12-04T02:00:00.000Z",
    });
    await engine.tick();
    expect((await engine.listRuns()).runs).toEqual([]);
    clock.set(Date.parse("2026-12-04T02:00:00Z"));
    await engine.tick();
    expect((await engine.listRuns()).runs.map((r) => r.key)).toEqual(["nightly@2026-12-04T02:00:00.000Z"]);
    await expect(engine.schedules.pause("nightlly")).rejects.toThrow(ScheduleNotFoundError);
    await expect(engine.schedules.pause("nightlly")).rejects.toThrow(
      /no schedule "nightlly". Known schedules: "nightly"/,
    );
  });

  it("a schedule removed from the code stops firing and is listed as orphaned", async () => {
    const db = await database();
    const clock = new FakeClock(Date.parse("2026-12-01T12:00:00Z"));
    await (await setup({ use: { report }, schedules: nightly() }).start({ database: db, clock })).close();
    const engine = closeLater(await setup({ use: { report } }).start({ database: db, clock }));
    expect(await engine.schedules.list()).toMatchObject([{ name: "nightly", orphaned: true, nextDue: null }]);
    clock.set(Date.parse("2026-12-02T02:00:00Z"));
    await engine.tick();
    expect((await engine.listRuns()).runs).toEqual([]);
  });
});
