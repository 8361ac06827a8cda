// Duplicate names are refused after a resume as in a first execution: replayed calls keep no set of names
// (Scope.useName), so these cover each way the first other call must build it from the replayed entries.

import { describe, expect, it } from "vitest";
import type { WorkflowContext } from "../../src/index.js";
import { restartWith } from "./restart-with.js";

/** Records `before` until it sleeps, then resumes the run with `after`'s code; returns the run's outcome. */
async function resumeWith(
  before: (ctx: WorkflowContext) => Promise<unknown>,
  after: (ctx: WorkflowContext) => Promise<unknown>,
): Promise<{ status: string; error: string | null; result: unknown }> {
  const handle = await restartWith(before, after);
  let result: unknown;
  let error: string | null = null;
  try {
    result = await handle.result({ timeout: 5000 });
  } catch (err) {
    error = (err as Error).message;
  }
  return { status: (await handle.info()).status, error, result };
}

const DUPLICATE = /takes a name already used in this scope/;

const recorded = async (ctx: WorkflowContext) => {
  await ctx.step("a", () => 1);
  await ctx.step("b", () => 2);
  await ctx.step("c", () => 3);
  await ctx.sleep("nap", "1m");
  return "done";
};

describe("duplicate names after a resume", () => {
  it("a new call reusing a replayed step's name is refused", async () => {
    const out = await resumeWith(recorded, async (ctx) => {
      await recorded(ctx);
      await ctx.step("b", () => 4);
    });
    expect(out.status).toBe("failed");
    expect(out.error).toMatch(DUPLICATE);
  });

  it("a call mid-replay reusing an earlier replayed name is refused, not reported as drift", async () => {
    const out = await resumeWith(recorded, async (ctx) => {
      await ctx.step("a", () => 1);
      await ctx.step("b", () => 2);
      await ctx.step("a", () => 3);
    });
    expect(out.status).toBe("failed");
    expect(out.error).toMatch(DUPLICATE);
  });

  it("the name of a sleep that replayed counts too (not only steps)", async () => {
    const out = await resumeWith(recorded, async (ctx) => {
      await recorded(ctx);
      await ctx.step("nap", () => 5);
    });
    expect(out.error).toMatch(DUPLICATE);
  });

  it("ctx.removed's name is taken: a later step of that name is refused", async () => {
    const out = await resumeWith(recorded, async (ctx) => {
      await ctx.step("a", () => 1);
      await ctx.removed("b");
      await ctx.step("c", () => 3);
      await ctx.sleep("nap", "1m");
      await ctx.step("b", () => 6);
    });
    expect(out.error).toMatch(DUPLICATE);
  });

  it("inside a join branch, a new call reusing a replayed name is refused", async () => {
    const branchy = async (ctx: WorkflowContext, extra: boolean) => {
      await ctx.join("fan", {
        x: async (c) => {
          await c.step("one", () => 1);
          await c.step("two", () => 2);
          await c.sleep("nap", "1m");
          if (extra) await c.step("one", () => 3);
        },
      });
    };
    const out = await resumeWith(
      (ctx) => branchy(ctx, false),
      (ctx) => branchy(ctx, true),
    );
    expect(out.error).toMatch(DUPLICATE);
  });

  it("a resumed run whose code repeats no name completes with its recorded outputs", async () => {
    const out = await resumeWith(recorded, async (ctx) => {
      const sum =
        (await ctx.step("a", () => 0)) + (await ctx.step("b", () => 0)) + (await ctx.step("c", () => 0));
      await ctx.sleep("nap", "1m");
      return [sum, await ctx.step("d", () => 4)];
    });
    expect(out).toMatchObject({ status: "completed", result: [6, 4] });
  });
});
