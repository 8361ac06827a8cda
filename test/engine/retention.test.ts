// Retention on SQLite and PostgreSQL, driven by FakeClock and tick(): the scheduler deletes exactly the runs
// past their retention (a workflow's setting wins per status over registry.start's), one bounded batch per
// pass, counted in "pruned" events and a metric; a child of an unfinished parent is kept.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { PRUNE_BATCH } from "../../src/engine/pruner.js";
import {
  type EngineEvent,
  FakeClock,
  FatalError,
  InvalidInputError,
  setup,
  type WaymarkEngine,
  workflow,
} from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const DAY = 86_400_000;
const T = Date.UTC(2026, 0, 1);

const DATABASES = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

const quick = workflow({ retention: { completed: "1d" }, run: async () => "ok" });
const plain = workflow({ run: async () => "ok" });
const failing = workflow({
  retention: { failed: "5d", completed: null },
  run: async (ctx, input: { fail: boolean }) => {
    await ctx.step("maybe", () => {
      if (input.fail) throw new FatalError("no");
    });
  },
});
const leaf = workflow({ retention: { completed: "1h" }, run: async () => "leaf" });
const tree = workflow({
  queues: { go: z.object({}) },
  run: async (ctx) => {
    await ctx.child("leaf", leaf, { key: `${ctx.key}-leaf` });
    await ctx.queue.next("hold", { queue: "go" });
  },
});

/** Pruned events as they come. */
function prunedEvents(engine: WaymarkEngine<any>): Array<Extract<EngineEvent, { type: "pruned" }>> {
  const seen: Array<Extract<EngineEvent, { type: "pruned" }>> = [];
  engine.on((e) => {
    if (e.type === "pruned") seen.push(e);
  });
  return seen;
}

async function keys(engine: WaymarkEngine<any>): Promise<string[]> {
  return (await engine.listRuns({ limit: 1000 })).runs.map((r) => `${r.workflow}/${r.key}`).sort();
}

describe.each(DATABASES)("retention on $name", ({ database }) => {
  it("deletes exactly the expired runs; the workflow's setting wins per status over the engine-wide one", async () => {
    const clock = new FakeClock(T);
    const engine = closeLater(
      await setup({ use: { quick, plain, failing } }).start({
        database: await database(),
        clock,
        retention: { completed: "7d", failed: "2d" },
      }),
    );
    const events = prunedEvents(engine);
    const runs = [
      await engine.getOrCreate("quick", "a"),
      await engine.getOrCreate("plain", "b"),
      await engine.getOrCreate("failing", "c", { fail: true }),
      await engine.getOrCreate("failing", "d", { fail: false }),
    ];
    for (const r of runs) await waitForStatus(engine, r, ["completed", "failed"]);
    const all = ["failing/c", "failing/d", "plain/b", "quick/a"];
    expect(await keys(engine)).toEqual(all);

    clock.set(T + DAY); // quick/a is exactly 1 day old: not older than its retention yet
    await engine.tick();
    expect(await keys(engine)).toEqual(all);
    clock.set(T + DAY + 1);
    await engine.tick();
    expect(await keys(engine)).toEqual(["failing/c", "failing/d", "plain/b"]);
    expect(events.map((e) => e.runs)).toEqual([[{ workflow: "quick", status: "completed", count: 1 }]]);

    // failing's own failed: "5d" wins over the engine's "2d"; its completed: null keeps completed runs.
    clock.set(T + 3 * DAY);
    await engine.tick();
    expect(await keys(engine)).toEqual(["failing/c", "failing/d", "plain/b"]);
    clock.set(T + 5 * DAY + 1);
    await engine.tick();
    expect(await keys(engine)).toEqual(["failing/d", "plain/b"]);
    clock.set(T + 7 * DAY + 1);
    await engine.tick();
    expect(await keys(engine)).toEqual(["failing/d"]);
    clock.set(T + 400 * DAY);
    await engine.tick();
    expect(await keys(engine)).toEqual(["failing/d"]);

    expect(events.map((e) => [e.count, e.runs[0]!.workflow, e.runs[0]!.status])).toEqual([
      [1, "quick", "completed"],
      [1, "failing", "failed"],
      [1, "plain", "completed"],
    ]);
    const metrics = (await engine.metrics.scrape()).body;
    expect(metrics).toContain('waymark_runs_pruned_total{workflow="quick",status="completed"} 1');
    expect(metrics).toContain('waymark_runs_pruned_total{workflow="failing",status="failed"} 1');
  });

  it("deletes one bounded batch per pass, the next after a pause of the clock", {
    timeout: 120_000,
  }, async () => {
    const clock = new FakeClock(T);
    const engine = closeLater(
      await setup({ use: { plain } }).start({
        database: await database(),
        clock,
        retention: { completed: "1d" },
      }),
    );
    const total = PRUNE_BATCH * 2 + 50;
    const handles = [];
    for (let i = 0; i < total; i++) handles.push(await engine.getOrCreate("plain", `r${i}`));
    for (const h of handles) await waitForStatus(engine, h, ["completed"]);
    const events = prunedEvents(engine);
    const left = async () => (await internals(engine).store.countRuns()).reduce((n, c) => n + c.count, 0);

    clock.set(T + DAY + 1);
    await engine.tick();
    await engine.tick(); // a second pass at the same time deletes nothing more
    expect(await left()).toBe(total - PRUNE_BATCH);
    clock.advance(100);
    await engine.tick();
    expect(await left()).toBe(total - 2 * PRUNE_BATCH);
    clock.advance(100);
    await engine.tick();
    expect(await left()).toBe(0);
    expect(events.map((e) => e.count)).toEqual([PRUNE_BATCH, PRUNE_BATCH, 50]);
  });

  it("a run finishing after a pass is pruned when its short retention expires, not at the next 60 s pass", async () => {
    const clock = new FakeClock(T);
    const brief = workflow({ retention: { completed: "1s" }, run: async () => "ok" });
    const engine = closeLater(await setup({ use: { brief } }).start({ database: await database(), clock }));
    await engine.tick(); // a pass with nothing to prune: the next one planned for 60 s later
    clock.advance(5_000);
    const h = await engine.getOrCreate("brief", "late");
    await waitForStatus(engine, h, ["completed"]);
    clock.advance(500);
    await engine.tick();
    expect(await keys(engine), "kept before its second is up").toEqual(["brief/late"]);
    clock.advance(501);
    await engine.tick();
    expect(await keys(engine), "pruned about a second after it finished").toEqual([]);
  });

  it("keeps a finished child while its parent is unfinished; the parent reads fine once its child is gone", async () => {
    const clock = new FakeClock(T);
    const engine = closeLater(
      await setup({ use: { tree, leaf } }).start({ database: await database(), clock }),
    );
    const parent = await engine.getOrCreate("tree", "t");
    const info = await waitForStatus(engine, parent, ["waiting"]);
    expect(info.status).toBe("waiting");
    const child = await engine.get("leaf", "t-leaf");
    expect((await child.info()).status).toBe("completed");

    clock.set(T + 30 * DAY);
    await engine.tick();
    expect((await child.info()).status).toBe("completed");

    await engine.send(parent, "go", {});
    await waitForStatus(engine, parent, ["completed"]);
    clock.set(T + 60 * DAY);
    await engine.tick();
    expect(await engine.findRun("leaf", "t-leaf")).toBeUndefined();
    // The parent (kept: tree has no retention) no longer names a child, and its history and diagnosis read.
    expect((await engine.family(parent)).children).toEqual([]);
    expect((await engine.history(parent)).map((e) => e.name)).toContain("leaf");
    expect((await engine.diagnose(parent)).run.status).toBe("completed");
  });
});

describe("retention settings are checked where they are given", () => {
  it("workflow({ retention }) refuses an unknown status and a bad duration, naming them", () => {
    expect(() => workflow({ retention: { done: "1d" } as never, run: async () => {} })).toThrow(
      /workflow\(\{ retention \}\) has "done", which is not a status runs end with; use completed, failed or cancelled/,
    );
    expect(() => workflow({ retention: { failed: "soon" }, run: async () => {} })).toThrow(
      /Invalid workflow\(\{ retention \}\)\.failed "soon": use milliseconds/,
    );
    expect(() => workflow({ retention: "30d" as never, run: async () => {} })).toThrow(
      /takes an object of durations by status/,
    );
  });

  it("registry.start({ retention }) refuses a bad setting before opening anything", async () => {
    const db = tempDb();
    await expect(
      setup({ use: { plain } }).start({ database: db, retention: { completed: -5 } }),
    ).rejects.toThrow(InvalidInputError);
    await expect(
      setup({ use: { plain } }).start({ database: db, retention: { completed: -5 } }),
    ).rejects.toThrow(/registry\.start\(\): option retention is wrong: Invalid retention\.completed -5/);
  });
});
