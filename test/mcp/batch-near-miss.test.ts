// A batch wait's near-misses through a real SDK client: a run collects 3 messages on "items" with
// ctx.queue.nextBatch; one arrives, the next two are sent to "item" and "Items" and refused. diagnose_run
// names both as meant for "items", says the batch holds 1 of 3 (not that nothing arrived), and its
// next actions send each missed body to "items" in the order sent, which fills the batch. On SQLite and PostgreSQL.

import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForRun, waitForStatus } from "../../fixtures/wait.js";
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

const packer = workflow({
  queues: { items: z.object({ sku: z.string() }) },
  run: async (ctx) => {
    const items = await ctx.queue.nextBatch("collect", { queue: "items", count: 3 });
    return items.map((i) => i.sku).join(",");
  },
});

interface Action {
  tool?: string;
  args?: { queue?: string; body?: unknown };
}

describe.each(DATABASES)("a batch wait's near-misses over MCP ($name)", ({ database }) => {
  it("diagnose_run names messages sent to item and Items as meant for the batch on items", async () => {
    const engine = (await setup({ use: { packer } }).start({
      database: await database(),
    })) as unknown as Engine;
    closer.add(() => engine.close());
    const client = await connect(closer, engine);
    const run = await engine.getOrCreate("packer", "p-1");
    await waitForStatus(engine, run, ["waiting"]);

    const send = (queue: string, sku: string) =>
      call(client, "send_message", { workflow: "packer", key: "p-1", queue, body: { sku } });
    expect((await send("items", "a")).isError).toBeFalsy();
    // The batch took the first message and waits again for two more.
    await waitForRun(engine, run, async (info) => {
      if (info.status !== "waiting") return false;
      const collect = (await run.history()).find((e) => e.path === "collect");
      return (collect?.detail as { messageIds?: number[] } | undefined)?.messageIds?.length === 1;
    });
    expect((await send("item", "b")).isError).toBe(true);
    expect((await send("Items", "c")).isError).toBe(true);

    const diagnosis = await call(client, "diagnose_run", { workflow: "packer", key: "p-1" });
    expect(diagnosis.isError).toBeFalsy();
    const d = diagnosis.structuredContent!;
    const all = [text(diagnosis), ...d.evidence.map((e: { fact: string }) => e.fact)].join("\n");
    expect(d.category).toBe("stuck-waiting");
    expect(d.culprit.path).toBe("collect");
    const misses = (d.evidence as Array<{ kind: string; fact: string }>).filter(
      (e) => e.kind === "near-miss",
    );
    expect(misses.map((m) => m.fact.replace(/ at \S+Z:/, ":"))).toEqual([
      'refused: queue "Items" does not exist (differs only in letter case from "items"): body {"sku":"c"}',
      'refused: queue "item" does not exist (differs by 1 character from "items"): body {"sku":"b"}',
    ]);
    // The batch is partly filled: the diagnosis says so, not that nothing arrived.
    expect(d.summary).toContain('a batch of 3 on queue "items" (1 of 3 arrived)');
    expect(d.summary).toContain("2 messages meant for it went astray");
    expect(all).toContain('1 of 3 messages have arrived on "items"; 2 more are awaited');
    expect(all).not.toContain("no message has arrived");
    // Each missed message is offered back to "items" in the order sent (a batch needs both, not only the
    // latest), then one wait, then the sender's fix naming both wrong queues.
    const sends = (d.nextActions as Action[]).filter((a) => a.tool === "send_message");
    expect(sends.map((a) => [a.args?.queue, a.args?.body])).toEqual([
      ["items", { sku: "b" }],
      ["items", { sku: "c" }],
    ]);
    expect((d.nextActions as Action[]).map((a) => a.tool ?? "person")).toEqual([
      "send_message",
      "send_message",
      "wait_for_run",
      "person",
    ]);
    expect(d.nextActions.at(-1).change).toBe(
      'Fix the sender: it sends to queue "Items" and "item" instead of "items".',
    );

    for (const a of sends) {
      const sent = await call(client, "send_message", { workflow: "packer", key: "p-1", ...a.args });
      expect(sent.isError).toBeFalsy();
    }
    expect(await run.result({ timeout: 10_000 })).toBe("a,b,c");
  });
});
