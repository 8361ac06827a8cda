// `waymark migrate`: a SQLite database copied into PostgreSQL whole (ids in order, JSON as is), refused
// when the target already holds its runs or the source is still in use; the runs go on there.

import os from "node:os";
import Database from "better-sqlite3";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { z } from "zod";
import { run as migrate } from "../../src/cli/migrate.js";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { openPostgresStore } from "../../src/storage/postgres/postgres-store.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { MessageRow, RunRow, Store } from "../../src/storage/store.js";
import { broken, fixed } from "../engine/bulk-invoices.js";
import { closeLater, onCleanup, tempDb, until } from "../helpers.js";
import { batch } from "../storage/backends.js";
import { sql, tempSchema } from "./pg.js";

let stderr = "";
beforeEach(() => {
  stderr = "";
  vi.spyOn(process.stderr, "write").mockImplementation((chunk: string | Uint8Array) => {
    stderr += String(chunk);
    return true;
  });
});
afterEach(() => {
  vi.restoreAllMocks();
});

const HOUR = 3_600_000;

const internalsStore = (engine: Parameters<typeof internals>[0]) => internals(engine).store;
/** A PostgreSQL target that already holds a run of its own ("own/mine"), which a copy must leave alone. */
async function targetWithOwnRun(url: string): Promise<Store> {
  const target = closeLater(await openPostgresStore(url));
  await target.commit(
    batch(1, {
      creates: [
        {
          workflow: "own",
          key: "mine",
          version: 1,
          input: null,
          initialState: "{}",
          now: 1,
          owner: null,
          leaseUntil: null,
        },
      ],
    }),
  );
  return target;
}

function definitions() {
  const approval = workflow({
    state: { amount: 0, by: null as string | null },
    queues: { decisions: z.object({ approve: z.boolean(), by: z.string() }) },
    run: async (ctx, input: { amount: number; note: string }) => {
      await ctx.step("record", (s) => {
        s.state.amount = input.amount;
        return { note: input.note };
      });
      const d = await ctx.queue.next("await-decision", { queue: "decisions" });
      await ctx.step(
        "decide",
        (s) => {
          if (d.by === "mallory") throw new Error("Mallory may not approve");
          s.state.by = d.by;
        },
        { retries: 0 },
      );
      return { approved: d.approve, by: d.by };
    },
  });
  const sleeper = workflow({
    run: async (ctx) => {
      await ctx.sleep("nap", "1h");
      return ctx.step("woke", () => "rested");
    },
  });
  return setup({ use: { approval, sleeper } });
}

/** Everything a store holds, with ids replaced by their rank so two databases compare. */
async function snapshot(store: Store) {
  const runs = (await store.listRuns({ limit: 1000 })).sort((a, b) => a.id - b.id);
  const runRank = new Map(runs.map((r, i) => [r.id, i]));
  const messages: MessageRow[] = [];
  const out = [];
  for (const r of runs) {
    messages.push(...(await store.listMessages(r.id, { includeConsumed: true, limit: 1000 })));
    out.push({
      run: { ...r, id: runRank.get(r.id), owner: null, leaseUntil: null } as Omit<RunRow, "id"> & {
        id: unknown;
      },
      entries: (await store.allEntries(r.id)).map((e) => ({ ...e, runId: runRank.get(e.runId) })),
      tags: (await store.runTags([r.id])).map((t) => ({ ...t, runId: runRank.get(t.runId) })),
      rejections: (await store.listRejections(r.id, 100)).map((j) => ({
        ...j,
        id: 0,
        runId: runRank.get(j.runId),
      })),
    });
  }
  messages.sort((a, b) => a.id - b.id);
  // A queue wait names the message it consumed by id: compare it by what the message is.
  const byId = new Map(messages.map((m) => [m.id, `${m.queue} ${m.sentAt} ${m.body}`]));
  for (const r of out) {
    for (const e of r.entries) {
      const detail = e.detail === null ? null : (JSON.parse(e.detail) as { messageId?: number });
      if (detail?.messageId !== undefined)
        e.detail = JSON.stringify({ ...detail, messageId: byId.get(detail.messageId) ?? "missing" });
    }
  }
  return {
    runs: out,
    messages: messages.map((m) => ({ ...m, id: 0, runId: runRank.get(m.runId) })),
    requests: (await store.pendingRequests(null, 1000)).map((q) => ({
      ...q,
      id: 0,
      runId: runRank.get(q.runId),
    })),
    workflows: await store.workflowMeta(),
  };
}

describe("waymark migrate", () => {
  it("copies a SQLite database into PostgreSQL whole; the runs go on there", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    const registry = definitions();
    const before = await registry.start({ database: db, clock });
    const done = await before.getOrCreate(
      "approval",
      "done",
      { amount: 10, note: "naïve café ☕ \u2028" },
      { tags: { customer: "c-9", region: "eu" } },
    );
    await done.send("decisions", { approve: true, by: "ann" });
    await done.result({ timeout: 10_000 });
    const failed = await before.getOrCreate("approval", "failed", { amount: 20, note: "x" });
    await failed.send("decisions", { approve: true, by: "mallory" });
    await expect(failed.result({ timeout: 10_000 })).rejects.toThrow(/Mallory/);
    const open = await before.getOrCreate("approval", "open", { amount: 30, note: '{"quoted": "json"}' });
    await expect(open.send("decisions", { approve: "maybe" } as never)).rejects.toThrow(/schema/);
    const napping = await before.getOrCreate("sleeper", "napping");
    const cancelled = await before.getOrCreate("sleeper", "cancelled");
    await until(
      async () => (await open.status()) === "waiting" && (await napping.status()) === "sleeping",
      "rest",
    );
    await before.cancel(cancelled.id);
    await before.close();
    // A request still pending in the source goes along.
    const src = openSqliteStore(db);
    await src.commit(
      batch(clock.now(), { requests: [{ runId: napping.id, kind: "note", args: '{"why":"kept"}' }] }),
    );
    await src.close();

    // The target already holds a run and a message of its own: copied ids come after them, in their old
    // order, and the queue waits that consumed copied messages name their new ids.
    const { url, schema } = await tempSchema();
    const target = closeLater(await openPostgresStore(url));
    const own = await target.commit(
      batch(1, {
        creates: [
          {
            workflow: "other",
            key: "mine",
            version: 1,
            input: null,
            initialState: "{}",
            now: 1,
            owner: null,
            leaseUntil: null,
          },
        ],
      }),
    );
    await target.commit(
      batch(2, {
        messages: [{ runId: own.created[0]!.run.id, queue: "q", body: "{}", idempotencyKey: null, now: 2 }],
      }),
    );

    const withPassword = new URL(url);
    withPassword.password = "secret"; // the server trusts local users; the password must not be printed
    expect(await migrate(["--from", db, "--to", withPassword.toString()])).toBe(0);
    expect(stderr).toMatch(
      /copied 5 runs, \d+ history entries, 2 tags, 2 messages, 1 requests, 1 refused messages, 2 published workflow versions, 0 schedules, 0 audit rows and 0 bulk plans/,
    );
    expect(stderr).not.toContain("secret");
    // The loaded tables have planner statistics at once (a two-tag filter is slow without them).
    const analysed = await sql(
      "SELECT relname FROM pg_stat_user_tables WHERE schemaname = $1 AND last_analyze IS NOT NULL ORDER BY relname",
      [schema],
    );
    expect(analysed.map((r: { relname: string }) => r.relname)).toEqual(
      expect.arrayContaining(["entries", "messages", "run_tags", "runs"]),
    );

    const source = openSqliteStore(db, { readonly: true });
    onCleanup(() => source.close());
    const copied = await snapshot(target);
    const mine = copied.runs.shift()!; // the target's own run, first by id
    expect(mine.run.key).toBe("mine");
    const expected = await snapshot(source);
    copied.runs.forEach((r) => {
      r.run.id = (r.run.id as number) - 1;
      for (const e of r.entries) e.runId = (e.runId as number) - 1;
      for (const j of r.rejections) j.runId = (j.runId as number) - 1;
      for (const t of r.tags) t.runId = (t.runId as number) - 1;
    });
    copied.messages.shift(); // the target's own message, first by id
    for (const m of copied.messages) m.runId = (m.runId as number) - 1;
    for (const q of copied.requests) q.runId = (q.runId as number) - 1;
    expect(copied).toEqual(expected);
    expect(copied.runs.map((r) => `${r.run.workflow}/${r.run.key}`)).toEqual([
      "approval/done",
      "approval/failed",
      "approval/open",
      "sleeper/napping",
      "sleeper/cancelled",
    ]);

    // Engines on PostgreSQL take the runs over: the waiting one gets its decision, the sleeper wakes.
    const after = closeLater(await registry.start({ database: url, clock }));
    const moved = await after.get("approval", "open");
    await moved.send("decisions", { approve: false, by: "bob" });
    expect(await moved.result({ timeout: 10_000 })).toEqual({ approved: false, by: "bob" });
    clock.advance(HOUR);
    expect(await (await after.get("sleeper", "napping")).result({ timeout: 10_000 })).toBe("rested");
    expect(await (await after.get("approval", "done")).result()).toEqual({ approved: true, by: "ann" });
    // Tags came along: the copied run is found by them there, from the index.
    expect(
      (await after.listRuns({ tags: { customer: "c-9", region: "eu" } })).runs.map((r) => r.key),
    ).toEqual(["done"]);

    // Twice is refused, and nothing more is copied.
    stderr = "";
    expect(await migrate(["--from", db, "--to", url])).toBe(1);
    expect(stderr).toContain("already holds 5 runs with the same workflow and key");
    expect(stderr).toContain("approval/done");
    expect(stderr).toContain("nothing was copied");
    expect((await target.listRuns({ limit: 100 })).length).toBe(6);
  });

  it("a parent waiting on a child run moves with it: the parent's id and the child it waits on are the target's", async () => {
    const db = tempDb();
    const { order, payment } = await import("../../fixtures/workflows/order.js");
    const registry = setup({ use: { order, payment } });
    const before = await registry.start({ database: db, deployCheck: false });
    const parent = await before.getOrCreate("order", "o-1", { orderId: "1", amount: 150, card: "4242" });
    await until(
      async () => (await before.findRun("payment", "pay-1"))?.status === "waiting",
      "the child waits",
    );
    await until(async () => (await parent.status()) === "waiting", "the parent waits");
    await before.close();
    const { url } = await tempSchema();
    const target = closeLater(await openPostgresStore(url));
    // A run of the target's own first, so every copied id moves.
    await target.commit(
      batch(1, {
        creates: [
          {
            workflow: "own",
            key: "mine",
            version: 1,
            input: null,
            initialState: "{}",
            now: 1,
            owner: null,
            leaseUntil: null,
          },
        ],
      }),
    );
    expect(await migrate(["--from", db, "--to", url])).toBe(0);
    const p = (await target.findRun("order", "o-1"))!;
    const c = (await target.findRun("payment", "pay-1"))!;
    expect(c.parentRunId).toBe(p.id);
    expect(p.waitRuns).toBe(`|${c.id}|`);
    const after = closeLater(await registry.start({ database: url, deployCheck: false }));
    await (await after.get("payment", "pay-1")).send("confirm", { ok: true });
    expect(await (await after.get("order", "o-1")).result({ timeout: 10_000 })).toEqual({
      orderId: "1",
      receipt: "rcpt-pay-1",
    });
  });

  it("runs of a limited workflow move with their concurrency key and limit, a queued one still queued; the limit holds there", async () => {
    const db = tempDb();
    // The holder keeps the slot through its retry backoff; the second run queues behind it.
    const holder = workflow({
      concurrency: { limit: 1, key: (input: { customer: string }) => input.customer },
      run: async (ctx, _input: { customer: string }) => {
        await ctx.step(
          "flaky",
          () => {
            throw new Error("down");
          },
          { backoff: "1h", retries: 1 },
        );
      },
    });
    const registry = setup({ use: { holder } });
    const before = await registry.start({
      database: db,
      deployCheck: false,
      clock: new FakeClock(Date.UTC(2026, 0, 1)),
    });
    const h = await before.getOrCreate("holder", "h-1", { customer: "c-9" });
    await until(async () => (await h.status()) === "retrying", "the holder retries");
    const queued = await before.getOrCreate("holder", "h-2", { customer: "c-9" });
    await until(async () => (await internalsStore(before).getRun(queued.id))?.queuedAt != null, "h-2 queued");
    await before.close();
    const { url } = await tempSchema();
    const target = closeLater(await openPostgresStore(url));
    expect(await migrate(["--from", db, "--to", url])).toBe(0);
    expect(await target.findRun("holder", "h-1")).toMatchObject({
      status: "retrying",
      concurrencyKey: "c-9",
      concurrencyLimit: 1,
      queuedAt: null,
    });
    const copied = (await target.findRun("holder", "h-2"))!;
    expect(copied).toMatchObject({
      status: "pending",
      concurrencyKey: "c-9",
      concurrencyLimit: 1,
      wakeAt: null,
    });
    expect(copied.queuedAt).not.toBeNull();
    // h-1 still holds the slot there: h-2 is not claimed; cancelling h-1 lets it in.
    expect(await target.claimDue(Date.UTC(2026, 0, 1) + 1000, "p", Date.UTC(2026, 0, 2), 10, null)).toEqual(
      [],
    );
    const h1 = (await target.findRun("holder", "h-1"))!;
    expect(await target.cancelRun(h1.id, Date.UTC(2026, 0, 1) + 2000, "p", "{}")).toBe(true);
    const claimed = await target.claimDue(Date.UTC(2026, 0, 1) + 3000, "p", Date.UTC(2026, 0, 2), 10, null);
    expect(claimed.map((r) => r.key)).toEqual(["h-2"]);
  });

  it("schedules move with their next firing, paused flag and last run (its id the target's); the next firing happens there once", async () => {
    const db = tempDb();
    const clock = new FakeClock(Date.parse("2026-12-01T00:30:00Z"));
    const job = workflow({ run: async () => "ok" });
    const registry = setup({
      use: { job },
      schedules: { hourly: { workflow: "job", every: "1h" }, halted: { workflow: "job", every: "1d" } },
    });
    const before = await registry.start({ database: db, clock, deployCheck: false });
    clock.set(Date.parse("2026-12-01T01:00:00Z"));
    await before.tick();
    await (await before.get("job", "hourly@2026-12-01T01:00:00.000Z")).result({ timeout: 10_000 });
    await before.schedules.pause("halted");
    const listed = await before.schedules.list();
    await before.close();
    const { url } = await tempSchema();
    const target = await targetWithOwnRun(url);
    expect(await migrate(["--from", db, "--to", url])).toBe(0);
    const after = closeLater(await registry.start({ database: url, clock, deployCheck: false }));
    const moved = await after.schedules.list();
    expect(moved).toEqual(
      listed.map((s) =>
        s.lastRun
          ? { ...s, lastRun: { ...s.lastRun, id: moved.find((m) => m.name === s.name)!.lastRun!.id } }
          : s,
      ),
    );
    const copiedRun = (await target.findRun("job", "hourly@2026-12-01T01:00:00.000Z"))!;
    expect(moved.find((s) => s.name === "hourly")!.lastRun).toEqual({
      id: copiedRun.id,
      key: copiedRun.key,
      status: "completed",
    });
    clock.set(Date.parse("2026-12-01T02:00:00Z"));
    await after.tick();
    expect(await target.findRun("job", "hourly@2026-12-01T02:00:00.000Z")).toBeDefined();
    expect(await target.findRun("job", "hourly@2026-12-01T01:00:00.000Z")).toEqual(copiedRun);
  });

  it("the audit moves whole and in order, run ids the target's (rows of no run keep workflow and key)", async () => {
    const db = tempDb();
    const clock = new FakeClock(Date.parse("2026-12-01T00:00:00Z"));
    const job = workflow({ run: async () => "ok" });
    const registry = setup({ use: { job } });
    const before = await registry.start({ database: db, clock, deployCheck: false });
    const write = (key: string, ok: boolean) =>
      before.audit.record(
        {
          surface: ok ? "mcp" : "cli",
          client: { name: "claude", version: "2" },
          action: "start_run",
          run: { workflow: "job", key },
          args: { workflow: "job", key, note: "x".repeat(3000) },
        },
        ok ? { ok: true } : { ok: false, code: "RUN_NOT_FOUND", message: `no job/${key}` },
      );
    const run = await before.getOrCreate("job", "j-1");
    await run.result({ timeout: 10_000 });
    await before.audit.record(
      {
        surface: "inspector",
        client: {},
        action: "cancel_run",
        run: { workflow: "job", key: "j-1", runId: run.id },
        args: {},
      },
      { ok: false, code: "RUN_FINISHED", message: "done" },
    );
    await write("j-2", true);
    await write("j-3", false);
    const listed = (await before.audit.list()).entries;
    await before.close();

    const { url } = await tempSchema();
    const target = await targetWithOwnRun(url);
    expect(await migrate(["--from", db, "--to", url])).toBe(0);
    expect(stderr).toContain("0 schedules, 3 audit rows and 0 bulk plans");
    const after = closeLater(await registry.start({ database: url, clock, deployCheck: false }));
    const moved = (await after.audit.list()).entries;
    const copiedRun = (await target.findRun("job", "j-1"))!;
    expect(copiedRun.id).not.toBe(run.id);
    expect(moved.map(({ id: _, ...e }) => e)).toEqual(
      listed.map(({ id: _, ...e }) => (e.run?.runId ? { ...e, run: { ...e.run, runId: copiedRun.id } } : e)),
    );
    expect(moved.map((e) => e.id)).toEqual([...moved.map((e) => e.id)].sort((a, b) => b - a));
    expect(await after.audit.count({ runId: copiedRun.id })).toBe(1);
  });

  it("refuses a source that an application still runs, and explains its arguments", async () => {
    const db = tempDb();
    let release!: () => void;
    const hold = new Promise<void>((r) => {
      release = r;
    });
    const busy = workflow({ run: async (ctx) => ctx.step("hold", () => hold) });
    const engine = closeLater(await setup({ use: { busy } }).start({ database: db }));
    await engine.getOrCreate("busy", "b-1");
    const { url, schema } = await tempSchema();
    expect(await migrate(["--from", db, "--to", url])).toBe(1);
    expect(stderr).toMatch(/is in use: run "busy\/b-1" is leased by .* Stop the application first/);
    release();

    stderr = "";
    expect(await migrate(["--from", db])).toBe(2);
    expect(stderr).toContain("pass both --from");
    expect(await migrate(["--from", db, "--to", "other.db"])).toBe(2);
    expect(stderr).toContain("--to takes a PostgreSQL URL");
    expect(await migrate(["--from", "/nonexistent/app.db", "--to", url])).toBe(1);
    expect(stderr).toContain('There is no SQLite database at "/nonexistent/app.db"');
    expect(await migrate(["--help"])).toBe(0);
    expect(stderr).toContain("Usage: waymark migrate");
    expect(schema).toMatch(/^wmt_/);
  });

  it("goes ahead when the lease is held by a process of this machine that no longer exists", async () => {
    const db = tempDb();
    const engine = await setup({ use: { sleeper: definitions().workflows.sleeper } }).start({ database: db });
    const run = await engine.getOrCreate("sleeper", "s-1");
    await engine.close();
    // As if the application was killed mid-run: its lease still runs, its process is gone.
    const raw = new Database(db);
    raw
      .prepare("UPDATE runs SET status = 'running', owner = ?, lease_until = ? WHERE id = ?")
      .run(`${os.hostname()}:999999:gone`, Date.now() + 600_000, run.id);
    raw.close();
    const { url } = await tempSchema();
    expect(await migrate(["--from", db, "--to", url])).toBe(0);
    expect(stderr).toMatch(/copied 1 runs/);
  });

  it("bulk plans move with their runs (ids the target's) and their progress; the plan is carried on there", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    const before = await broken.start({ database: db, clock });
    for (const n of [1, 2, 3]) {
      const run = await before.getOrCreate("invoice", `inv-${n}`, { n, kind: "tax" });
      await expect(run.result()).rejects.toThrow(/Tax API/);
    }
    const preview = await before.bulk.preview({
      action: "replay",
      selector: { workflow: "invoice", status: ["failed"] },
    });
    await before.close();
    const part = await fixed.start({ database: db, clock });
    const stop = new AbortController();
    await part.bulk.apply(preview.token, {
      batchSize: 1,
      signal: stop.signal,
      onProgress: () => stop.abort(),
    });
    await part.close();
    const { url } = await tempSchema();
    const target = await targetWithOwnRun(url);
    expect(await migrate(["--from", db, "--to", url])).toBe(0);
    expect(stderr).toMatch(/ and 1 bulk plans from/);
    const after = closeLater(await fixed.start({ database: url, clock }));
    expect((await after.bulk.plan(preview.token)).progress).toMatchObject({ done: 1, pending: 2 });
    const rest = await after.bulk.apply(preview.token);
    expect(rest).toMatchObject({ counts: { done: 2, skipped: 1 }, finished: true });
    const mine = (await target.findRun("own", "mine"))!;
    for (const n of [1, 2, 3]) {
      const row = (await target.findRun("invoice", `inv-${n}`))!;
      expect(row.id).not.toBe(mine.id);
      expect(await (await after.get("invoice", `inv-${n}`)).result({ timeout: 10_000 })).toBe("paid");
    }
  });
});
