// A wait on several queues through a real SDK client: get_run shows it waiting on each queue, diagnose_run
// finds a message sent to a near-miss name of any of them (here the second), and send_message to any of
// them wakes it with the queue it came from. On SQLite and PostgreSQL.

import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import type { Engine } from "../../src/engine/engine.js";
import { setup, workflow } from "../../src/index.js";
import { tempSchema } from "../postgres/pg.js";
import { Closer, call, connect, tempDb, text } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const DATABASES = [
  { name: "sqlite", database: async () => tempDb(closer) },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

const expense = workflow({
  queues: {
    approve: z.object({ by: z.string() }),
    reject: z.object({ by: z.string(), reason: z.string() }),
  },
  run: async (ctx) => {
    const got = await ctx.queue.next("decide", { queue: ["approve", "reject"] });
    return got.queue === "reject"
      ? `rejected by ${got.body.by}: ${got.body.reason}`
      : `approved by ${got.body.by}`;
  },
});

describe.each(DATABASES)("a multi-queue wait over MCP ($name)", ({ database }) => {
  it("get_run shows each queue, diagnose_run finds a near-miss of the second, send_message to it wakes the run", async () => {
    const engine = (await setup({ use: { expense } }).start({
      database: await database(),
    })) as unknown as Engine;
    closer.add(() => engine.close());
    const client = await connect(closer, engine);
    const run = await engine.getOrCreate("expense", "e-1");
    await waitForStatus(engine, run, ["waiting"]);

    const got = await call(client, "get_run", { workflow: "expense", key: "e-1" });
    expect(got.isError).toBeFalsy();
    expect(got.structuredContent!.waiting.map((w: { queue: string }) => w.queue).sort()).toEqual([
      "approve",
      "reject",
    ]);
    expect(text(got)).toContain("approve");
    expect(text(got)).toContain("reject");

    // A sender misspells the second queue: refused, and the diagnosis names it as meant for "reject".
    const typo = await call(client, "send_message", {
      workflow: "expense",
      key: "e-1",
      queue: "rejct",
      body: { by: "bob", reason: "duplicate" },
    });
    expect(typo.isError).toBe(true);
    const diagnosis = await call(client, "diagnose_run", { workflow: "expense", key: "e-1" });
    expect(diagnosis.isError).toBeFalsy();
    expect(text(diagnosis)).toContain('"rejct"');
    expect(text(diagnosis)).toMatch(/from "reject"/);

    const sent = await call(client, "send_message", {
      workflow: "expense",
      key: "e-1",
      queue: "reject",
      body: { by: "bob", reason: "duplicate" },
    });
    expect(sent.isError).toBeFalsy();
    expect(sent.structuredContent).toMatchObject({ runWasWaiting: true });
    expect(await run.result({ timeout: 10_000 })).toBe("rejected by bob: duplicate");
  });
});
