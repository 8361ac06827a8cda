// Store conformance, schedules: declared by code, orphaned when no longer declared, a firing advanced by
// compare-and-set with its run created in the same transaction, pause and resume. SQLite and PostgreSQL alike.

import { describe, expect, it } from "vitest";
import type { ScheduleDecl, WriteBatch } from "../../src/storage/store.js";
import { BACKENDS, batch } from "./backends.js";
import { T0 } from "./fixtures.js";

const decl = (name: string, nextDue: number | null, spec = '{"every":"1h"}'): ScheduleDecl => ({
  name,
  workflow: "wf",
  spec,
  nextDue,
});

function createBatch(key: string, now = T0): WriteBatch {
  return batch(now, {
    creates: [
      {
        workflow: "wf",
        key,
        version: 1,
        input: null,
        initialState: "{}",
        now,
        owner: null,
        leaseUntil: null,
      },
    ],
  });
}

describe.each(BACKENDS)("$name store: schedules", (backend) => {
  it("declares schedules, keeps next_due unless the spec changed, orphans those no longer declared", async () => {
    const store = await (await backend.fresh()).open();
    expect(await store.schedules()).toEqual([]);
    await store.syncSchedules([decl("a", T0 + 100), decl("b", T0 + 200)], T0);
    const rows = await store.schedules();
    expect(rows.map((r) => [r.name, r.nextDue, r.paused, r.orphaned])).toEqual([
      ["a", T0 + 100, false, false],
      ["b", T0 + 200, false, false],
    ]);
    expect(rows[0]).toMatchObject({
      workflow: "wf",
      lastDue: null,
      lastRunId: null,
      lastOutcome: null,
      updatedAt: T0,
    });

    // The same spec keeps its stored next firing; a changed spec takes the new one; "b" left the code.
    await store.syncSchedules([decl("a", T0 + 999), decl("c", T0 + 300, '{"every":"2h"}')], T0 + 1);
    await store.syncSchedules([decl("a", T0 + 999), decl("c", T0 + 400, '{"every":"3h"}')], T0 + 2);
    expect((await store.schedules()).map((r) => [r.name, r.nextDue, r.orphaned, r.spec])).toEqual([
      ["a", T0 + 100, false, '{"every":"1h"}'],
      ["b", T0 + 200, true, '{"every":"1h"}'],
      ["c", T0 + 400, false, '{"every":"3h"}'],
    ]);
    // Declared again: no longer orphaned.
    await store.syncSchedules([decl("b", T0 + 5)], T0 + 3);
    expect((await store.schedules()).map((r) => [r.name, r.orphaned])).toEqual([
      ["a", true],
      ["b", false],
      ["c", true],
    ]);
  });

  it("advances a firing once: the run is created in the same transaction, a stale expected value writes nothing", async () => {
    const fresh = await backend.fresh();
    const one = await fresh.open();
    const two = await fresh.open();
    await one.syncSchedules([decl("a", T0 + 100)], T0);
    const fire = {
      name: "a",
      expected: T0 + 100,
      next: T0 + 200,
      fired: { due: T0 + 100, outcome: "started" },
      now: T0 + 100,
    };
    // Two processes fire the same firing at once: exactly one wins.
    const results = await Promise.all([
      one.advanceSchedule(fire, createBatch("a@1", T0 + 100)),
      two.advanceSchedule(fire, createBatch("a@1", T0 + 100)),
    ]);
    expect(results.filter((r) => r !== null)).toHaveLength(1);
    const won = results.find((r) => r !== null)!;
    expect(won.created[0]).toMatchObject({
      created: true,
      run: { workflow: "wf", key: "a@1", status: "pending" },
    });
    const [row] = await two.schedules();
    expect(row).toMatchObject({
      nextDue: T0 + 200,
      lastDue: T0 + 100,
      lastOutcome: "started",
      lastRunId: won.created[0]!.run.id,
      updatedAt: T0 + 100,
    });
    expect((await one.listRuns({ limit: 10 })).map((r) => r.key)).toEqual(["a@1"]);

    // A skipped firing moves next_due and records itself, and keeps the last run.
    const skipped = await one.advanceSchedule(
      {
        name: "a",
        expected: T0 + 200,
        next: T0 + 300,
        fired: { due: T0 + 200, outcome: "skipped" },
        now: T0 + 200,
      },
      null,
    );
    expect(skipped).toEqual({ created: [], messages: [], requests: [] });
    expect((await one.schedules())[0]).toMatchObject({
      nextDue: T0 + 300,
      lastDue: T0 + 200,
      lastOutcome: "skipped",
      lastRunId: won.created[0]!.run.id,
    });
    // Only next_due (no firing): last firing kept.
    expect(
      await one.advanceSchedule(
        { name: "a", expected: T0 + 300, next: T0 + 400, fired: null, now: T0 + 300 },
        null,
      ),
    ).not.toBeNull();
    expect((await one.schedules())[0]).toMatchObject({ nextDue: T0 + 400, lastDue: T0 + 200 });
    // Unknown schedule: nothing.
    expect(await one.advanceSchedule({ ...fire, name: "nope" }, createBatch("x"))).toBeNull();
    expect(await one.listRuns({ limit: 10 })).toHaveLength(1);
  });

  it("pauses (no advance while paused) and resumes with next_due cleared for the code to compute", async () => {
    const store = await (await backend.fresh()).open();
    await store.syncSchedules([decl("a", T0 + 100)], T0);
    expect(await store.setSchedulePaused("a", true, T0 + 1)).toBe(true);
    expect(await store.setSchedulePaused("nope", true, T0 + 1)).toBe(false);
    expect((await store.schedules())[0]).toMatchObject({
      paused: true,
      nextDue: T0 + 100,
      updatedAt: T0 + 1,
    });
    const fire = {
      name: "a",
      expected: T0 + 100,
      next: T0 + 200,
      fired: { due: T0 + 100, outcome: "started" },
      now: T0 + 100,
    };
    expect(await store.advanceSchedule(fire, createBatch("a@1"))).toBeNull();
    expect(await store.listRuns({ limit: 10 })).toEqual([]);

    expect(await store.setSchedulePaused("a", false, T0 + 500)).toBe(true);
    expect((await store.schedules())[0]).toMatchObject({ paused: false, nextDue: null });
    // A resume's null is advanced from null (the process with the code computes it).
    expect(
      await store.advanceSchedule({ ...fire, expected: null, next: T0 + 600, fired: null }, null),
    ).not.toBeNull();
    expect((await store.schedules())[0]).toMatchObject({ nextDue: T0 + 600, lastDue: null });
    // A sync with the same spec keeps it; a null one gets the declared value.
    await store.setSchedulePaused("a", false, T0 + 700);
    await store.syncSchedules([decl("a", T0 + 800)], T0 + 700);
    expect((await store.schedules())[0]).toMatchObject({ nextDue: T0 + 800 });
  });

  it("migrates a database of the previous schema version to one with schedules", async () => {
    const fresh = await backend.fresh();
    await fresh.atVersion(4, {});
    const store = await fresh.open();
    await store.syncSchedules([decl("a", T0 + 100)], T0);
    expect((await store.schedules()).map((r) => r.name)).toEqual(["a"]);
  });
});
