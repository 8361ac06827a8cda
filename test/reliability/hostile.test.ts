// Hostile input: every MCP tool and the run handle API under generated garbage. Each call must end in an
// isError result (or a WaymarkError) that says what was wrong; the server keeps serving; run data never changes.

import Database from "better-sqlite3";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { WaymarkError } from "../../src/index.js";
import { Closer, call, connect, startEngine, tempDb, text, until } from "../mcp/helpers.js";

const closer = new Closer();
let engine: Engine;
let db: string;
let client: Awaited<ReturnType<typeof connect>>;

/** Strings an attacker or a confused model might send. */
const nasty = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  fc.constantFrom(
    "",
    " ",
    "../../etc/passwd",
    "'; DROP TABLE runs; --",
    '" OR 1=1 --',
    "\u0000",
    "\u202e\u200b",
    "%00%2e%2e/",
    "waymark://runs/approval/exp-1",
    "__proto__",
    "constructor",
    "approval/exp-1",
    "a".repeat(100_000),
    "🙂".repeat(5_000),
    // biome-ignore lint/suspicious/noTemplateCurlyInString: a literal that looks like a template, on purpose
    "${process.exit()}",
  ),
);

/** A value nested `depth` levels deep. */
const deep = (depth: number): unknown => {
  let v: unknown = "bottom";
  for (let i = 0; i < depth; i++) v = i % 2 ? [v] : { v };
  return v;
};

const value = fc.oneof(
  nasty,
  fc.integer(),
  fc.double(),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.constantFrom(
    deep(50),
    deep(3000),
    { approve: "yes", by: 1 },
    Array.from({ length: 5000 }, (_, i) => i),
  ),
  fc.anything({ maxDepth: 4 }),
);

/** Arguments for a tool: its own field names with hostile values, some missing, plus unknown fields. */
function argsFor(fields: string[]) {
  return fc
    .tuple(
      fc.record(Object.fromEntries(fields.map((f) => [f, value])), { requiredKeys: [] }),
      fc.dictionary(nasty, value, { maxKeys: 3 }),
    )
    .map(([known, extra]) => ({ ...extra, ...known }) as Record<string, unknown>);
}

/** Everything that matters in the database, to prove hostile calls changed nothing. */
function snapshot(): string {
  const conn = new Database(db, { readonly: true });
  try {
    return JSON.stringify([
      conn
        .prepare(
          "SELECT id, workflow, key, version, status, state, output, error, wake_at FROM runs ORDER BY id",
        )
        .all(),
      conn.prepare("SELECT run_id, seq, status, output FROM entries ORDER BY run_id, seq").all(),
      conn.prepare("SELECT id, run_id, queue, body, consumed_at FROM messages ORDER BY id").all(),
      conn.prepare("SELECT count(*) AS n FROM requests").get(),
    ]);
  } finally {
    conn.close();
  }
}

const TOOLS: Record<string, string[]> = {
  list_workflows: [],
  list_runs: [
    "workflow",
    "status",
    "key",
    "keyContains",
    "errorContains",
    "createdAfter",
    "createdBefore",
    "limit",
    "cursor",
  ],
  get_run: ["workflow", "key"],
  get_history: ["workflow", "key", "cursor", "limit"],
  get_step: ["workflow", "key", "step"],
  send_message: ["workflow", "key", "queue", "body", "idempotencyKey"],
  replay_run: ["workflow", "key", "fromStep", "version", "dryRun"],
  start_run: ["workflow", "key", "input"],
  cancel_run: ["workflow", "key"],
  call_action: ["workflow", "key", "action", "args"],
  wait_for_run: ["workflow", "key", "timeoutSeconds"],
};
const counts: Record<string, number> = {};

beforeAll(async () => {
  db = tempDb(closer);
  engine = await startEngine(closer, db);
  client = await connect(closer, engine);
  await call(client, "start_run", { workflow: "approval", key: "exp-1", input: { amount: 5 } });
  await call(client, "start_run", { workflow: "sleeper", key: "nap-1" });
  await until(
    async () => (await engine.listRuns({ status: ["waiting", "sleeping"] })).runs.length === 2,
    "runs to settle",
  );
});

afterAll(async () => {
  process.stderr.write(`hostile MCP calls per tool: ${JSON.stringify(counts)}\n`);
  await closer.closeAll();
});

describe("hostile input over MCP", () => {
  for (const [tool, fields] of Object.entries(TOOLS)) {
    it(`${tool}: garbage in, a clear error (or a harmless answer) out, nothing changed`, async () => {
      const before = snapshot();
      await fc.assert(
        fc.asyncProperty(argsFor(fields), async (args) => {
          // Writes only get garbage that names no existing run or workflow, so any success would be a bug.
          if (
            ["start_run"].includes(tool) &&
            ["approval", "flaky", "fixable", "sleeper"].includes(args.workflow as string)
          )
            return;
          counts[tool] = (counts[tool] ?? 0) + 1;
          const res = await call(client, tool, args);
          if (res.isError) {
            const msg = text(res);
            expect(msg.length).toBeGreaterThan(10);
            expect(msg).not.toMatch(
              /Cannot read properties|is not a function|undefined is not|Maximum call stack/,
            );
          } else {
            expect(["list_workflows", "list_runs"]).toContain(tool);
          }
        }),
        { numRuns: 60 },
      );
      await client.ping();
      expect(snapshot()).toBe(before);
    }, 120_000);
  }

  it("send_message to a real run with a hostile body or queue is refused and stores nothing", async () => {
    const before = snapshot();
    await fc.assert(
      fc.asyncProperty(fc.oneof(nasty, fc.constant("decisions")), value, async (queue, body) => {
        const valid =
          queue === "decisions" &&
          typeof body === "object" &&
          body !== null &&
          typeof (body as { approve?: unknown }).approve === "boolean" &&
          typeof (body as { by?: unknown }).by === "string" &&
          (body as { by: string }).by.length > 0;
        if (valid) return;
        counts.send_message_body = (counts.send_message_body ?? 0) + 1;
        const res = await call(client, "send_message", { workflow: "approval", key: "exp-1", queue, body });
        expect(res.isError).toBe(true);
        expect(text(res)).toMatch(/queue|schema|message|body|JSON|string/i);
      }),
      { numRuns: 100 },
    );
    expect(snapshot()).toBe(before);
  }, 120_000);
});

describe("hostile input to the run handle API", () => {
  it("an object whose toString is not a function is refused as an object, not with a TypeError", async () => {
    const run = await engine.get("approval", "exp-1");
    const odd = { toString: 0 } as never;
    const anyEngine = engine as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    // Found by the property below (its counterexample [{"toString":0},[],""]): String(value) threw.
    await expect(anyEngine.getOrCreate!.call(engine, odd, [], "")).rejects.toBeInstanceOf(WaymarkError);
    await expect(run.action(odd, [] as never)).rejects.toBeInstanceOf(WaymarkError);
    await expect(anyEngine.getOrCreate!.call(engine, odd, "k")).rejects.toThrow(/an object/);
  });

  it("getOrCreate, send, action, listRuns and history refuse garbage with WaymarkErrors and write nothing", async () => {
    const before = snapshot();
    const run = await engine.get("approval", "exp-1");
    const anyEngine = engine as unknown as Record<string, (...a: unknown[]) => Promise<unknown>>;
    await fc.assert(
      fc.asyncProperty(value, value, value, async (a, b, c) => {
        counts.api = (counts.api ?? 0) + 1;
        const attempts: Array<() => Promise<unknown>> = [
          () => anyEngine.getOrCreate!.call(engine, a, b, c),
          () => anyEngine.getOrCreate!.call(engine, "approval", a, { amount: () => 1 }),
          () => run.send(a as never, b as never),
          () => run.action(a as never, b as never),
          () => engine.history(run.id, { after: a as never, limit: b as never }),
          () => engine.entry(run.id, a as never),
          () =>
            engine.listRuns({
              workflow: a as never,
              status: b as never,
              limit: c as never,
              cursor: a as never,
            }),
        ];
        for (const attempt of attempts) {
          try {
            await attempt();
          } catch (err) {
            expect(err, `threw ${String(err)}`).toBeInstanceOf(WaymarkError);
            expect((err as Error).message.length).toBeGreaterThan(10);
          }
        }
      }),
      { numRuns: 150 },
    );
    expect(snapshot()).toBe(before);
  }, 120_000);
});
