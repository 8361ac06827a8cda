// A wait on several queues through a real SDK client: get_run shows it waiting on each queue, diagnose_run
// finds a message sent to a near-miss name of any of them (here the second), and send_message to any of
// them wakes it with the queue it came from. On SQLite and PostgreSQL.

import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import type { Engine } from "../../src/engine/engine.js";
import { MAX_WAIT_QUEUES } from "../../src/engine/queue-waits.js";
import { setup, workflow } from "../../src/index.js";
import { MAX_ANSWER_CHARS } from "../../src/mcp/budget.js";
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
    // One wait listing its queues, each with the schema its messages must match.
    expect(got.structuredContent!.waiting).toHaveLength(1);
    expect(got.structuredContent!.waiting[0]).toMatchObject({
      kind: "queue",
      entry: "decide",
      queue: "approve",
    });
    expect(
      got.structuredContent!.waiting[0].queues.map((q: { queue: string; messageSchema: unknown }) => [
        q.queue,
        typeof q.messageSchema,
      ]),
    ).toEqual([
      ["approve", "object"],
      ["reject", "object"],
    ]);
    expect(text(got)).toContain('Waits for message on any of queues "approve" or "reject" at "decide"');
    const healthy = await call(client, "diagnose_run", { workflow: "expense", key: "e-1" });
    expect(text(healthy)).toContain('waiting on any of queues "approve" or "reject" at "decide"');
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

// A wait on the most queues allowed, each with a schema: every answer about it fits its budget.
const many = Object.fromEntries(
  Array.from({ length: MAX_WAIT_QUEUES }, (_, i) => [
    `queue-with-a-longish-name-${i}`,
    z.object({
      decidedBy: z.string().describe("Who decided, as the approver's e-mail address"),
      amount: z.number(),
    }),
  ]),
) as Record<string, z.ZodType<{ decidedBy: string; amount: number }>>;
const wide = workflow({
  queues: many,
  run: async (ctx) => ctx.queue.next("any", { queue: Object.keys(many), timeout: "1h" }),
});

describe.each(DATABASES)(`a wait on ${MAX_WAIT_QUEUES} queues over MCP ($name)`, ({ database }) => {
  it("get_run, diagnose_run, list_runs and the review prompt stay within budget, listing the first 10 queues and counting the rest", async () => {
    const engine = (await setup({ use: { wide } }).start({
      database: await database(),
    })) as unknown as Engine;
    closer.add(() => engine.close());
    const client = await connect(closer, engine);
    const run = await engine.getOrCreate("wide", "w-1");
    await waitForStatus(engine, run, ["waiting"]);
    const address = { workflow: "wide", key: "w-1" };
    const more = `and ${MAX_WAIT_QUEUES - 10} more queues`;

    const got = await call(client, "get_run", address);
    expect(got.isError, text(got)).toBeFalsy();
    expect(JSON.stringify(got).length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    const [wait] = got.structuredContent!.waiting;
    expect(got.structuredContent!.waiting).toHaveLength(1);
    expect(wait.queues.map((q: { queue: string }) => q.queue)).toEqual(Object.keys(many).slice(0, 10));
    expect(wait.queues.every((q: { messageSchema?: unknown }) => q.messageSchema !== undefined)).toBe(true);
    expect(wait.moreQueues).toBe(MAX_WAIT_QUEUES - 10);
    expect(text(got)).toContain(`"queue-with-a-longish-name-9" ${more} at "any"`);

    const diagnosis = await call(client, "diagnose_run", address);
    expect(diagnosis.isError, text(diagnosis)).toBeFalsy();
    expect(JSON.stringify(diagnosis).length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    expect(text(diagnosis)).toContain(`waiting on any of queues "queue-with-a-longish-name-0", `);
    expect(text(diagnosis)).toContain(more);

    const listed = await call(client, "list_runs", { workflow: "wide" });
    expect(listed.isError, text(listed)).toBeFalsy();
    expect(text(listed)).toContain(more);

    // review_approvals: one wait, its first 10 queues with their schemas, the rest counted.
    const review = await call(client, "review_approvals", {});
    expect(review.isError, text(review)).toBeFalsy();
    expect(JSON.stringify(review).length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    const [approval] = review.structuredContent!.approvals;
    expect(approval.queues).toHaveLength(10);
    expect(approval.moreQueues).toBe(MAX_WAIT_QUEUES - 10);
    expect(text(review)).toContain(more);

    // The review prompt shows the first 10 schemas, not one per queue.
    const prompt = await client.getPrompt({ name: "review_pending_approvals", arguments: {} });
    const said = JSON.stringify(prompt.messages);
    expect(said).toContain("and 90 more queues (their schemas: get_run)");
    expect(said.split("$schema").length - 1).toBe(10);
  });
});

// 30 runs each waiting on 10 queues with wordy schemas: more than one answer holds. The waits left out of an
// answer are reached with its nextCursor, each once, and the suggested calls name only waits it shows.
const wordy = Object.fromEntries(
  Array.from({ length: 10 }, (_, i) => [
    `q${i}`,
    z.object(
      Object.fromEntries(
        Array.from({ length: 12 }, (_, f) => [
          `field${f}`,
          z.string().describe(`What field ${f} of the decision says`),
        ]),
      ),
    ),
  ]),
) as Record<string, z.ZodType<Record<string, string>>>;
const ten = workflow({
  queues: wordy,
  run: async (ctx) => ctx.queue.next("decide", { queue: Object.keys(wordy) }),
});

describe("review_approvals pages past what one answer holds", () => {
  it("every wait is reached through nextCursor once; next actions name shown waits only", async () => {
    const engine = (await setup({ use: { ten } }).start({ database: tempDb(closer) })) as unknown as Engine;
    closer.add(() => engine.close());
    const client = await connect(closer, engine);
    for (let i = 0; i < 30; i++)
      await waitForStatus(engine, await engine.getOrCreate("ten", `t-${i}`), ["waiting"]);
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (; pages < 30; ) {
      pages++;
      const r = await call(client, "review_approvals", { limit: 50, ...(cursor ? { cursor } : {}) });
      expect(r.isError, text(r)).toBeFalsy();
      expect(JSON.stringify(r).length).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      const keys = r.structuredContent!.approvals.map((a: { key: string }) => a.key);
      seen.push(...keys);
      for (const action of r.structuredContent!.nextActions as string[]) {
        const key = /"key":"(t-\d+)"/.exec(action)?.[1];
        if (key) expect(keys).toContain(key);
      }
      cursor = r.structuredContent!.nextCursor ?? undefined;
      if (!cursor) break;
    }
    expect(pages, "answers needed for 30 waits").toBeGreaterThan(1);
    expect([...seen].sort()).toEqual(Array.from({ length: 30 }, (_, i) => `t-${i}`).sort());
  });
});
