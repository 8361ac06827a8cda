// Values nested deeper than MAX_DEPTH levels are refused with INVALID_INPUT at every entry point of the
// engine (a message body, a run's input, an action's arguments, a step's result and the state it leaves),
// before anything recursive walks them: 100,000 levels overflowed the stack in the schema check.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import { MAX_DEPTH } from "../../src/engine/depth.js";
import { internals } from "../../src/engine/engine.js";
import { setup, workflow } from "../../src/index.js";
import { closeLater, nested, tempDb } from "../helpers.js";

let actionCalls = 0;
const deepWf = workflow({
  state: { s: null as unknown },
  queues: { any: z.any(), strict: z.object({ approve: z.boolean() }) },
  actions: {
    echo: (_c, x: unknown) => {
      actionCalls++;
      return x;
    },
  },
  run: async (ctx, input: { output?: number; state?: number } | undefined) => {
    if (input?.output) await ctx.step("output", () => nested(input.output!));
    if (input?.state) {
      await ctx.step("state", (s) => {
        s.state.s = nested(input.state!);
      });
    }
    return ctx.queue.next("wait", { queue: "any" });
  },
});

async function start() {
  const engine = closeLater(await setup({ use: { deepWf } }).start({ database: tempDb() }));
  const run = await engine.getOrCreate("deepWf", "k");
  await waitForStatus(engine, run, ["waiting"]);
  return { engine, run };
}

const invalid = (what: RegExp) => ({
  code: "INVALID_INPUT",
  message: expect.stringMatching(what),
  details: expect.objectContaining({ limit: MAX_DEPTH }),
});

describe(`values nested deeper than ${MAX_DEPTH} levels`, () => {
  it("a message body: refused whatever the queue's schema, nothing stored; the limit itself is fine", async () => {
    const { engine, run } = await start();
    for (const queue of ["any", "strict"]) {
      for (const levels of [100_000, MAX_DEPTH + 1]) {
        await expect(run.send(queue as "any", nested(levels))).rejects.toMatchObject(
          invalid(/message for queue .* more than 64 levels deep/),
        );
      }
    }
    expect(await internals(engine).store.listMessages(run.id, { includeConsumed: true, limit: 10 })).toEqual(
      [],
    );
    await run.send("any", nested(MAX_DEPTH));
    expect(await run.result({ timeout: 5000 })).toEqual(nested(MAX_DEPTH));
  });

  it("a run's input: refused, no run created", async () => {
    const { engine } = await start();
    await expect(engine.getOrCreate("deepWf", "deep", nested(100_000) as never)).rejects.toMatchObject(
      invalid(/input of run "deepWf\/deep" .* more than 64 levels/),
    );
    expect(await internals(engine).store.findRun("deepWf", "deep")).toBeUndefined();
  });

  it("an action's arguments: refused before the action runs", async () => {
    const { run } = await start();
    actionCalls = 0;
    await expect(run.action("echo", nested(100_000))).rejects.toMatchObject(
      invalid(/arguments of action "echo"/),
    );
    expect(actionCalls).toBe(0);
  });

  it("a step's result and the state it leaves: the step fails at once, naming the limit", async () => {
    const { engine } = await start();
    for (const [field, what] of [
      ["output", /result of step "output" .* more than 64 levels/],
      ["state", /state after step "state" .* more than 64 levels/],
    ] as const) {
      const run = await engine.getOrCreate("deepWf", field, { [field]: 100_000 });
      await expect(run.result({ timeout: 5000 })).rejects.toThrow(what);
      const step = (await run.history()).find((e) => e.path === field)!;
      expect(step.status).toBe("failed");
      expect(step.attempts).toHaveLength(1);
      expect(step.attempts![0]!.error).toMatchObject({ code: "INVALID_INPUT" });
      expect((await run.info()).state).toEqual({ s: null });
    }
  });
});
