// A run whose steps return at once commits each record as soon as its microtasks settle (a sequential run has
// nobody to share a commit with). It must still let the event loop turn now and then: the change watcher's
// poll (a cancel or message from another process), the lease heartbeat and the process's servers are timers
// and sockets. An outside check found a cancel sent from another process answered "requested" and the run
// completing all of its 150,000 steps 1.3 s later.

import { expect, test } from "vitest";
import { attach, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";

const STEPS = 300_000;

test("a cancel from another process lands while a run executes steps that return at once", async () => {
  let ran = 0;
  let started!: () => void;
  const halfway = new Promise<void>((resolve) => (started = resolve));
  const busy = workflow({
    run: async (ctx) => {
      for (let i = 0; i < STEPS; i++) {
        await ctx.step(`s${i}`, () => {
          ran++;
          if (i === 200) started();
          return i;
        });
      }
      return "all done";
    },
  });
  const db = tempDb();
  const engine = closeLater(await setup({ use: { busy } }).start({ database: db }));
  const other = closeLater(await attach({ database: db })); // another process, as far as the store knows
  const run = await engine.getOrCreate("busy", "b-1");
  await halfway;
  // The timers that carry the request over (the other side's write, then this side's poll) get their turn.
  expect(await other.cancel(run.id)).toBe("requested");
  await expect(run.result()).rejects.toMatchObject({ code: "RUN_CANCELLED" });
  expect(ran).toBeLessThan(STEPS);
});
