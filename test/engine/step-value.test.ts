// What a step, a join or a race hands the workflow is its record as it reads back, on the first run as on a
// replay: code after it that changes the returned object, undefined properties and -0 cannot make the two differ.

import { expect, it } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { FakeClock, setup, type WorkflowContext, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { restartWith } from "./restart-with.js";

it("a step's value is the same on the first run and on a replay", async () => {
  const seen: unknown[] = [];
  const code = (shared: Record<string, unknown>) => async (ctx: WorkflowContext) => {
    const obj = await ctx.step("obj", () => shared);
    shared.x = 2; // code after the step changes the object the step returned
    const zero = await ctx.step("zero", () => -0);
    const list = await ctx.step("list", () => [1, { u: undefined }]);
    seen.push({
      obj: structuredClone(obj),
      sameObject: obj === shared,
      negativeZero: Object.is(zero, -0),
      list,
    });
    await ctx.sleep("nap", 1000);
    return "done";
  };
  const run = await restartWith(code({ x: 1, u: undefined }), code({ x: 1, u: undefined }));
  expect(await run.result({ timeout: 5000 })).toBe("done");
  // The first run, then every replay (the deploy check's and the resume's).
  expect(seen.length).toBeGreaterThanOrEqual(2);
  expect(seen[0]).toEqual({ obj: { x: 1 }, sameObject: false, negativeZero: false, list: [1, {}] });
  for (const later of seen.slice(1)) expect(later).toStrictEqual(seen[0]);
});

it("a join's and a race's values are the same on the first run and on a replay", async () => {
  const seen: unknown[] = [];
  const code = (shared: Record<string, unknown>) => async (ctx: WorkflowContext) => {
    const joined = await ctx.join("both", { a: async () => shared, b: async () => undefined });
    const raced = await ctx.race("first", { fast: async () => shared });
    const empty = await ctx.race("none", { fast: async () => undefined });
    shared.x = 2;
    seen.push(structuredClone({ joined: { ...joined }, raced, empty, keys: Object.keys(empty) }));
    await ctx.sleep("nap", 1000);
    return "done";
  };
  const run = await restartWith(code({ x: 1, u: undefined }), code({ x: 1, u: undefined }));
  expect(await run.result({ timeout: 5000 })).toBe("done");
  expect(seen.length).toBeGreaterThanOrEqual(2);
  expect(seen[0]).toEqual({
    joined: { a: { x: 1 } },
    raced: { winner: "fast", value: { x: 1 } },
    empty: { winner: "fast" },
    keys: ["winner"],
  });
  for (const later of seen.slice(1)) expect(later).toStrictEqual(seen[0]);
});

it("a step value whose then getter throws is a failed attempt: retried, then the step fails, and the run goes on", async () => {
  const registry = setup({
    use: {
      wf: workflow({
        run: async (ctx) => {
          let caught = "";
          try {
            await ctx.step(
              "odd",
              () => ({
                // biome-ignore lint/suspicious/noThenProperty: a value whose then getter throws is the point
                get then(): never {
                  throw new Error("then getter");
                },
              }),
              { retries: 2, backoff: { initial: 1, jitter: false } },
            );
          } catch (err) {
            caught = (err as Error).name;
          }
          await ctx.sleep("nap", 60_000);
          return caught;
        },
      }),
    },
  });
  const clock = new FakeClock();
  const engine = closeLater(await registry.start({ database: tempDb(), clock }));
  const run = await engine.getOrCreate("wf", "k");
  for (let i = 0; i < 3; i++) {
    clock.advance(10);
    await engine.tick();
  }
  await waitForStatus(engine, run, ["sleeping"]);
  const [odd] = await run.history();
  expect(odd).toMatchObject({ name: "odd", status: "failed" });
  expect((odd as { attempts: unknown[] }).attempts).toHaveLength(3);
  clock.advance(60_000);
  expect(await run.result({ timeout: 5000 })).toBe("StepFailedError");
});
