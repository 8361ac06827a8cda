import { describe, expect, it } from "vitest";
import { waitForRun, waitForStatus } from "../../fixtures/wait.js";
import { FakeClock, setup, type WorkflowContext, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { restartWith } from "./restart-with.js";

/** Runs `before` until it sleeps, then restarts the same workflow name and version with `after`'s code. */
async function driftRun(
  before: (ctx: WorkflowContext) => Promise<unknown>,
  after: (ctx: WorkflowContext) => Promise<unknown>,
) {
  const handle = await restartWith(before, after);
  await expect(handle.result({ timeout: 5000 })).rejects.toThrow();
  return handle.info();
}

describe("code drift", () => {
  it("a renamed root step fails the run with HistoryDivergedError naming both names and the fixes", async () => {
    const info = await driftRun(
      async (ctx) => {
        await ctx.step("load", () => 1);
        await ctx.step("charge", () => 2);
        await ctx.sleep("nap", "1m");
      },
      async (ctx) => {
        await ctx.step("load", () => 1);
        await ctx.step("charge-card", () => 2);
        await ctx.sleep("nap", "1m");
      },
    );
    expect(info.status).toBe("failed");
    expect(info.error!.name).toBe("HistoryDivergedError");
    expect(info.error!.message).toContain(
      'at entry #2 of the root scope: history holds a step named "charge"; the code asked for one named "charge-card"',
    );
    expect(info.error!.message).toContain('ctx.removed("charge")');
    expect(info.error!.message).toContain("ctx.version(");
    expect(info.error!.details).toMatchObject({ scope: "", ordinal: 1, replayFrom: "charge" });
  });

  it("reordered root steps are caught at the first differing entry", async () => {
    const info = await driftRun(
      async (ctx) => {
        await ctx.step("a", () => 1);
        await ctx.step("b", () => 2);
        await ctx.sleep("nap", "1m");
      },
      async (ctx) => {
        await ctx.step("b", () => 2);
        await ctx.step("a", () => 1);
        await ctx.sleep("nap", "1m");
      },
    );
    expect(info.error!.message).toContain(
      'entry #1 of the root scope: history holds a step named "a"; the code asked for one named "b"',
    );
  });

  it("a changed kind is caught too (a step became a sleep)", async () => {
    const info = await driftRun(
      async (ctx) => {
        await ctx.step("wait", () => 1);
        await ctx.sleep("nap", "1m");
      },
      async (ctx) => {
        await ctx.sleep("wait", "1s");
        await ctx.sleep("nap", "1m");
      },
    );
    expect(info.error!.message).toContain(
      'history holds a step named "wait"; the code asked for a sleep named "wait"',
    );
  });

  it("entries removed from the end of the root scope are caught when the code finishes", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    const before = workflow({
      run: async (ctx) => {
        await ctx.sleep("nap", "1m");
        await ctx.step("c", () => 1);
        await ctx.sleep("nap-2", "1m");
      },
    });
    const first = await setup({ use: { wf: before } }).start({ database: db, clock });
    const run = await first.getOrCreate("wf", "k");
    await waitForStatus(first, run, ["sleeping"]);
    clock.advance(60_000);
    await waitForRun(first, run, async () => (await run.history()).some((e) => e.name === "nap-2"), {
      what: "the second sleep",
    });
    await first.close();
    const after = workflow({
      run: async (ctx) => {
        await ctx.sleep("nap", "1m");
      },
    });
    const second = closeLater(await setup({ use: { wf: after } }).start({ database: db, clock }));
    clock.advance(60_000);
    await expect((await second.get("wf", "k")).result({ timeout: 5000 })).rejects.toThrow(
      /entry #2 of the root scope: history holds a step named "c"; the code asked for nothing more \(the code finished\)/,
    );
  });

  it("drift inside a join branch names the branch scope", async () => {
    const info = await driftRun(
      async (ctx) => {
        await ctx.join("fan", {
          a: async (c) => {
            await c.step("one", () => 1);
            await c.sleep("nap", "1m");
          },
        });
      },
      async (ctx) => {
        await ctx.join("fan", {
          a: async (c) => {
            await c.step("uno", () => 1);
            await c.sleep("nap", "1m");
          },
        });
      },
    );
    expect(info.error!.message).toContain(
      'of scope "fan[a]": history holds a step named "one"; the code asked for one named "uno"',
    );
  });

  it("workflow code cannot swallow a divergence", async () => {
    const info = await driftRun(
      async (ctx) => {
        await ctx.step("a", () => 1);
        await ctx.sleep("nap", "1m");
      },
      async (ctx) => {
        try {
          await ctx.step("b", () => 1);
        } catch {
          // ignored on purpose
        }
        await ctx.sleep("nap", "1m");
        return "finished anyway";
      },
    );
    expect(info.status).toBe("failed");
    expect(info.error!.name).toBe("HistoryDivergedError");
  });
});

describe("patches", () => {
  it("ctx.removed skips an entry old histories hold; ctx.version pins behaviour per run", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    const v1 = workflow({
      run: async (ctx) => {
        await ctx.step("a", () => "a");
        await ctx.step("legacy", () => "legacy");
        await ctx.sleep("nap", "1m");
        return ctx.step("tail", () => "old tail");
      },
    });
    const first = await setup({ use: { wf: v1 } }).start({ database: db, clock });
    const old = await first.getOrCreate("wf", "old");
    await waitForStatus(first, old, ["sleeping"]);
    await first.close();

    const patched = workflow({
      run: async (ctx) => {
        await ctx.step("a", () => "a");
        await ctx.removed("legacy");
        await ctx.sleep("nap", "1m");
        const v = await ctx.version("new-tail", 2);
        return ctx.step(v >= 2 ? "tail-2" : "tail", () => (v >= 2 ? "new tail" : "old tail"));
      },
    });
    const second = closeLater(await setup({ use: { wf: patched } }).start({ database: db, clock }));
    const fresh = await second.getOrCreate("wf", "new");
    await waitForStatus(second, fresh, ["sleeping"]);
    clock.advance(60_000);
    // Both runs reach the patch point fresh, so both take the new behaviour; the old one skipped "legacy".
    expect(await (await second.get("wf", "old")).result({ timeout: 5000 })).toBe("new tail");
    expect(await fresh.result({ timeout: 5000 })).toBe("new tail");
    expect((await fresh.history()).map((e) => e.path)).toEqual(["a", "nap", "new-tail", "tail-2"]);
  });

  it("ctx.version returns 1 for a run that passed the point before the patch existed", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    const v1 = workflow({
      run: async (ctx) => {
        await ctx.step("charge", () => 1);
        await ctx.sleep("nap", "1m");
        return "v1";
      },
    });
    const first = await setup({ use: { wf: v1 } }).start({ database: db, clock });
    await waitForStatus(first, await first.getOrCreate("wf", "old"), ["sleeping"]);
    await first.close();
    const patched = workflow({
      run: async (ctx) => {
        const v = await ctx.version("charge-with-tax", 2);
        await ctx.step(v >= 2 ? "charge-with-tax-step" : "charge", () => 1);
        await ctx.sleep("nap", "1m");
        return `v${v}`;
      },
    });
    const second = closeLater(await setup({ use: { wf: patched } }).start({ database: db, clock }));
    clock.advance(60_000);
    expect(await (await second.get("wf", "old")).result({ timeout: 5000 })).toBe("v1");
  });
});
