// A resumed run whose leading steps the store packed (LoadedRun.packed) replays as one loaded eagerly: the
// same values handed to the code, no step run again, drift and duplicates refused, entries read on demand.

import { describe, expect, it } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, type WorkflowContext, workflow } from "../../src/index.js";
import type { LoadedRun } from "../../src/storage/store.js";
import { closeLater, tempDb } from "../helpers.js";

const N = 5000;

/** What step i returns: quotes, backslashes, emoji, empty and missing values among them. */
function value(i: number): unknown {
  switch (i % 8) {
    case 0:
      return { q: `say "${i}"`, b: "a\\b", e: "🎉ü", sep: "\u0001" };
    case 1:
      return "";
    case 2:
      return undefined;
    case 3:
      return null;
    case 4:
      return [i, "x,y", {}];
    case 5:
      return i / 3;
    case 6:
      return { "": { nested: [true, false] } };
    default:
      return `s${i}`;
  }
}

/** N steps returning value(i), then a sleep: how the run was recorded. */
async function recorded(ctx: WorkflowContext, got: unknown[] = [], ran: number[] = []) {
  for (let i = 0; i < N; i++) {
    got.push(
      await ctx.step(`s${i}`, () => {
        ran.push(i);
        return value(i);
      }),
    );
  }
  await ctx.sleep("nap", "1m");
}

/**
 * Records `recorded` until it sleeps, then resumes it with `after`, noting what loadRuns answered; the run's
 * outcome and whether its load came packed.
 */
async function resumeWith(after: (ctx: WorkflowContext) => Promise<unknown>) {
  const db = tempDb();
  const clock = new FakeClock();
  const first = await setup({ use: { wf: workflow({ run: (ctx) => recorded(ctx) }) } }).start({
    database: db,
    clock,
  });
  const run = await first.getOrCreate("wf", "k");
  await waitForStatus(first, run, ["sleeping"]);
  await first.close();
  const second = closeLater(
    await setup({ use: { wf: workflow({ run: after }) } }).start({ database: db, clock }),
  );
  const store = internals(second).store;
  const load = store.loadRuns.bind(store);
  const loads: LoadedRun[] = [];
  store.loadRuns = async (ids, options) => {
    const out = await load(ids, options);
    loads.push(...out);
    return out;
  };
  clock.advance(60_000);
  const handle = await second.get("wf", "k");
  let result: unknown;
  let error: string | null = null;
  try {
    result = await handle.result({ timeout: 10_000 });
  } catch (err) {
    error = (err as Error).message;
  }
  // The deploy check after start loads the run too, eagerly: the executing load is the packed one.
  const packed = Math.max(0, ...loads.map((l) => l.packed?.count ?? 0));
  return { status: (await handle.info()).status, error, result, packed, handle };
}

describe("a resumed run with packed steps", () => {
  it("hands the code the values the steps returned, runs none of them again, and goes on", async () => {
    // What each execution got (the sleep may suspend the run and replay it once more).
    const executions: unknown[][] = [];
    const ran: number[] = [];
    const out = await resumeWith(async (ctx) => {
      const got: unknown[] = [];
      executions.push(got);
      await recorded(ctx, got, ran);
      return ctx.step("after", () => "new");
    });
    expect(out.packed).toBe(N);
    expect(out).toMatchObject({ status: "completed", error: null, result: "new" });
    expect(ran).toEqual([]);
    expect(executions.length).toBeGreaterThan(0);
    for (const got of executions) {
      expect(got).toEqual(Array.from({ length: N }, (_, i) => value(i)));
      // undefined stays undefined (nothing recorded), not null.
      expect(got[2]).toBeUndefined();
      expect(got[3]).toBeNull();
    }
    const history = await out.handle.history({ limit: 3 });
    expect(history.map((e) => [e.path, e.status])).toEqual([
      ["s0", "completed"],
      ["s1", "completed"],
      ["s2", "completed"],
    ]);
  });

  it("refuses a renamed step among them as drift, naming what history holds", async () => {
    const out = await resumeWith(async (ctx) => {
      for (let i = 0; i < N; i++) await ctx.step(i === 1234 ? "renamed" : `s${i}`, () => value(i));
    });
    expect(out.packed).toBe(N);
    expect(out.status).toBe("failed");
    expect(out.error).toMatch(/s1234/);
    expect(out.error).toMatch(/renamed/);
  });

  it("refuses another kind of call where a packed step stands", async () => {
    const out = await resumeWith(async (ctx) => {
      for (let i = 0; i < 10; i++) await ctx.step(`s${i}`, () => value(i));
      await ctx.sleep("s10", "1m");
    });
    expect(out.status).toBe("failed");
    expect(out.error).toMatch(/s10/);
    expect(out.error).toMatch(/sleep/);
  });

  it("refuses a packed step's name used again, after the replay and in the middle of it", async () => {
    const late = await resumeWith(async (ctx) => {
      await recorded(ctx);
      await ctx.step("s7", () => 1);
    });
    expect(late.status).toBe("failed");
    expect(late.error).toMatch(/takes a name already used in this scope/);
    const mid = await resumeWith(async (ctx) => {
      for (let i = 0; i < 100; i++) await ctx.step(`s${i}`, () => value(i));
      await ctx.step("s3", () => 1);
    });
    expect(mid.status).toBe("failed");
    expect(mid.error).toMatch(/takes a name already used in this scope/);
  });

  it("stops short of the end as history ending early, like an eager load", async () => {
    const out = await resumeWith(async (ctx) => {
      for (let i = 0; i < 20; i++) await ctx.step(`s${i}`, () => value(i));
      return "done early";
    });
    expect(out.status).toBe("failed");
    expect(out.error).toMatch(/s20/);
  });
});
