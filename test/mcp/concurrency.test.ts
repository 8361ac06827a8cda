// A run queued behind its concurrency limit, read through a real MCP client (in-memory pair), on SQLite and
// PostgreSQL: get_run says "queued behind 2 runs of customer c-9" and names the holders, a holder says it
// holds a slot, and diagnose_run files the queued run as queued-by-limit with the holders to look at.

import { afterEach, describe, expect, it } from "vitest";
import { internals } from "../../src/engine/engine.js";
import { setup, workflow } from "../../src/index.js";
import { tempSchema } from "../postgres/pg.js";
import { Closer, call, connect, tempDb, text, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

/** Two runs of customer c-9 hold both slots (retrying, with an hour's backoff); a third one is queued. */
const invoice = workflow({
  concurrency: { limit: 2, key: (input: { customerId: string }) => input.customerId, label: "customer" },
  run: async (ctx, _input: { customerId: string }) => {
    await ctx.step(
      "charge",
      () => {
        throw new Error("card network down");
      },
      { backoff: "1h" },
    );
  },
});

const stores = [
  { name: "sqlite", database: async () => tempDb(closer) },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

describe.each(stores)("concurrency in get_run and diagnose_run on $name", ({ database }) => {
  it("a queued run reads 'queued behind 2 runs of customer c-9' with the holders; a holder holds a slot", async () => {
    const engine = internals(await setup({ use: { invoice } }).start({ database: await database() }));
    closer.add(() => engine.close());
    const client = await connect(closer, engine);
    const status = async (key: string) => (await engine.store.findRun("invoice", key))?.status;
    for (const key of ["inv-1", "inv-2"]) {
      await engine.getOrCreate("invoice", key, { customerId: "c-9" });
      await until(async () => (await status(key)) === "retrying", `${key} retrying`);
    }
    const queued = await engine.getOrCreate("invoice", "inv-3", { customerId: "c-9" });
    await engine.tick();
    await until(async () => (await engine.store.getRun(queued.id))?.queuedAt != null, "inv-3 queued");

    const answer = await call(client, "get_run", { workflow: "invoice", key: "inv-3" });
    expect(answer.isError).toBeFalsy();
    expect(text(answer)).toContain(
      "Pending: queued behind 2 runs of customer c-9 (limit 2 at once: invoice/inv-1, invoice/inv-2).",
    );
    expect(answer.structuredContent).toMatchObject({
      status: "pending",
      concurrency: {
        key: "c-9",
        limit: 2,
        label: "customer",
        queued: true,
        holding: false,
        holderCount: 2,
        holders: [
          { workflow: "invoice", key: "inv-1", status: "retrying" },
          { workflow: "invoice", key: "inv-2", status: "retrying" },
        ],
      },
    });
    expect(answer.structuredContent!.nextActions.join("\n")).toContain(
      'get_run {"workflow":"invoice","key":"inv-1"}',
    );

    const holder = await call(client, "get_run", { workflow: "invoice", key: "inv-1" });
    expect(text(holder)).toContain("Holds one of the 2 slot(s) of customer c-9.");
    expect(holder.structuredContent!.concurrency).toMatchObject({ holding: true, queued: false, text: null });

    const diagnosis = await call(client, "diagnose_run", { workflow: "invoice", key: "inv-3" });
    expect(diagnosis.structuredContent).toMatchObject({ category: "queued-by-limit", culprit: null });
    expect(diagnosis.structuredContent!.summary).toContain("queued behind 2 runs of customer c-9");
    expect(text(diagnosis)).toMatch(/diagnose_run \{"workflow":"invoice","key":"inv-1"\}/);
  }, 60_000);
});
