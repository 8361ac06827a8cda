// Workflows for the approvals view's multi-queue tests: an expense that waits on "approve" or "reject" (one
// wait, two queues, each with its own schema), and a collector that waits for a batch of 3 on "items". seed()
// starts one of each and leaves the collector with 1 of its 3 messages.

import { z } from "zod";
import { waitForRun, waitForStatus } from "../../../fixtures/wait.js";
import type { Engine } from "../../../src/engine/engine.js";
import { setup, workflow } from "../../../src/index.js";

const expense = workflow({
  queues: {
    approve: z.object({ by: z.string() }),
    reject: z.object({ by: z.string(), reason: z.string() }),
  },
  run: async (ctx, input: { amount: number }) => {
    const got = await ctx.queue.next("decide", { queue: ["approve", "reject"] });
    return got.queue === "reject"
      ? `rejected ${input.amount} by ${got.body.by}: ${got.body.reason}`
      : `approved ${input.amount} by ${got.body.by}`;
  },
});

const collect = workflow({
  queues: { items: z.object({ name: z.string() }) },
  run: async (ctx) => {
    const items = await ctx.queue.nextBatch("collect", { queue: "items", count: 3 });
    return items.map((i) => i.name).join(",");
  },
});

export const multiQueueRegistry = setup({ use: { expense, collect } });

/** Starts expense/e-1 (waiting on approve or reject) and collect/c-1 (1 of 3 items arrived). */
export async function seedMultiQueue(engine: Engine): Promise<void> {
  const e = await engine.getOrCreate("expense", "e-1", { amount: 120 });
  const c = await engine.getOrCreate("collect", "c-1");
  await waitForStatus(engine, e, ["waiting"]);
  await waitForStatus(engine, c, ["waiting"]);
  await engine.send(c, "items", { name: "a" });
  await waitForRun(
    engine,
    c,
    async (info) => {
      if (info.status !== "waiting") return false;
      const ids = (await engine.entry(c, "collect")).detail?.messageIds;
      return Array.isArray(ids) && ids.length === 1;
    },
    { what: "waiting again with 1 of 3 items" },
  );
}
