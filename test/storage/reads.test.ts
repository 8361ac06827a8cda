// Store conformance, reads and the rest: listing and counting runs, messages, published workflows,
// loading runs for execution, noticing other processes' commits, opening and schema versions.
// Every test runs against SQLite and PostgreSQL alike.

import { describe, expect, it } from "vitest";
import { StorageError } from "../../src/errors.js";
import { type EntryRow, isReplayEntry, type RunRow } from "../../src/storage/store.js";
import { until } from "../helpers.js";
import { BACKENDS, batch } from "./backends.js";
import { createRun, entry, send, T0 } from "./fixtures.js";

/** What replay reads of an entry (all a completed step is loaded with). */
function replayFields(e: EntryRow) {
  const { runId, seq, scope, ordinal, name, kind, status, output, detail, stateSeq, stateDiff } = e;
  return { runId, seq, scope, ordinal, name, kind, status, output, detail, stateSeq, stateDiff };
}

describe.each(BACKENDS)("$name store: reads", (backend) => {
  it("lists runs newest first with filters and a keyset cursor", async () => {
    const store = await (await backend.fresh()).open();
    const runs: RunRow[] = [];
    for (let i = 0; i < 6; i++) {
      runs.push(
        await createRun(store, `order-${i}`, {
          workflow: i % 2 ? "invoice" : "report",
          now: T0 + Math.floor(i / 2),
        }),
      );
    }
    await store.commit(
      batch(T0, {
        runs: [
          { id: runs[1]!.id, status: "failed", error: '{"message":"Tax API Timeout"}' },
          { id: runs[4]!.id, status: "completed" },
        ],
      }),
    );
    const keys = async (q: Parameters<typeof store.listRuns>[0]) =>
      (await store.listRuns(q)).map((r) => r.key);
    expect(await keys({ limit: 10 })).toEqual([
      "order-5",
      "order-4",
      "order-3",
      "order-2",
      "order-1",
      "order-0",
    ]);
    expect(await keys({ limit: 2 })).toEqual(["order-5", "order-4"]);
    expect(await keys({ limit: 10, workflow: "invoice" })).toEqual(["order-5", "order-3", "order-1"]);
    expect(await keys({ limit: 10, status: ["failed", "completed"] })).toEqual(["order-4", "order-1"]);
    expect(await keys({ limit: 10, status: [] })).toHaveLength(6);
    expect(await keys({ limit: 10, key: "order-3" })).toEqual(["order-3"]);
    expect(await keys({ limit: 10, keyContains: "der-2" })).toEqual(["order-2"]);
    expect(await keys({ limit: 10, errorContains: "tax api" })).toEqual(["order-1"]);
    expect(await keys({ limit: 10, createdAfter: T0 + 1 })).toEqual([
      "order-5",
      "order-4",
      "order-3",
      "order-2",
    ]);
    expect(await keys({ limit: 10, createdBefore: T0 + 1 })).toEqual(["order-1", "order-0"]);
    const last = (await store.listRuns({ limit: 3 })).at(-1)!;
    expect(await keys({ limit: 10, before: { createdAt: last.createdAt, id: last.id } })).toEqual([
      "order-2",
      "order-1",
      "order-0",
    ]);
    expect(await keys({ limit: 10, workflow: "report", status: ["pending"], createdAfter: T0 + 1 })).toEqual([
      "order-2",
    ]);
  });

  it("gets several runs by id in one call, leaving out ids that name no run", async () => {
    const store = await (await backend.fresh()).open();
    const a = await createRun(store, "a");
    const b = await createRun(store, "b");
    const got = await store.getRuns([b.id, 9999, a.id]);
    expect(got.map((r) => r.key).sort()).toEqual(["a", "b"]);
    expect(got.find((r) => r.key === "b")).toEqual(await store.getRun(b.id));
    expect(await store.getRuns([])).toEqual([]);
  });

  it("counts runs by workflow, version and status; lists live versions with their keys", async () => {
    const store = await (await backend.fresh()).open();
    const a = await createRun(store, "a");
    await createRun(store, "b");
    const c = await createRun(store, "c", { workflow: "other" });
    await store.commit(
      batch(T0, {
        runs: [
          { id: a.id, status: "completed" },
          { id: c.id, version: 2 },
        ],
      }),
    );
    const counts = await store.countRuns();
    expect(
      counts.sort((x, y) => `${x.workflow}${x.status}`.localeCompare(`${y.workflow}${y.status}`)),
    ).toEqual([
      { workflow: "other", version: 2, status: "pending", count: 1 },
      { workflow: "wf", version: 1, status: "completed", count: 1 },
      { workflow: "wf", version: 1, status: "pending", count: 1 },
    ]);
    const live = await store.liveVersions();
    expect(live.sort((x, y) => x.workflow.localeCompare(y.workflow))).toEqual([
      { workflow: "other", version: 2, count: 1, keys: ["c"] },
      { workflow: "wf", version: 1, count: 1, keys: ["b"] },
    ]);
    for (let i = 0; i < 25; i++) await createRun(store, `many-${i}`, { workflow: "many" });
    const many = (await store.liveVersions()).find((l) => l.workflow === "many")!;
    expect(many.count).toBe(25);
    expect(many.keys).toHaveLength(20);
  });

  it("counts messages not consumed yet by workflow and queue; stores a run's trace context", async () => {
    const store = await (await backend.fresh()).open();
    expect(await store.pendingMessageCounts()).toEqual([]);
    const a = await createRun(store, "a");
    const b = await createRun(store, "b", { workflow: "other" });
    const first = await send(store, a.id, "decisions", { n: 1 });
    await send(store, a.id, "decisions", { n: 2 });
    await send(store, a.id, "notes", { n: 3 });
    await send(store, b.id, "decisions", { n: 4 });
    await store.commit(batch(T0 + 1, { consume: [{ messageId: first.id, runId: a.id, bySeq: 1 }] }));
    const counts = await store.pendingMessageCounts();
    expect(counts.sort((x, y) => `${x.workflow}${x.queue}`.localeCompare(`${y.workflow}${y.queue}`))).toEqual(
      [
        { workflow: "other", queue: "decisions", count: 1 },
        { workflow: "wf", queue: "decisions", count: 1 },
        { workflow: "wf", queue: "notes", count: 1 },
      ],
    );
    // A run that read 1 of its 3 messages and completed leaves none waiting: nothing will ever read them.
    const done = await createRun(store, "done", { workflow: "finished" });
    const read = await send(store, done.id, "decisions", { n: 5 });
    await send(store, done.id, "decisions", { n: 6 });
    await send(store, done.id, "notes", { n: 7 });
    await store.commit(
      batch(T0 + 2, {
        consume: [{ messageId: read.id, runId: done.id, bySeq: 1 }],
        runs: [{ id: done.id, status: "completed" }],
      }),
    );
    expect((await store.pendingMessageCounts()).filter((c) => c.workflow === "finished")).toEqual([]);

    const traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    const res = await store.commit(
      batch(T0, {
        creates: [
          {
            workflow: "wf",
            key: "traced",
            version: 1,
            input: null,
            initialState: "{}",
            now: T0,
            owner: null,
            leaseUntil: null,
            traceContext: traceparent,
          },
        ],
      }),
    );
    expect(res.created[0]!.run.traceContext).toBe(traceparent);
    expect((await store.findRun("wf", "a"))!.traceContext).toBeNull();
    await store.commit(batch(T0, { runs: [{ id: a.id, traceContext: traceparent }] }));
    expect((await store.getRun(a.id))!.traceContext).toBe(traceparent);
  });

  it("reads messages: a run's (with or without consumed), everyone's since an id, the highest id", async () => {
    const store = await (await backend.fresh()).open();
    expect(await store.maxMessageId()).toBe(0);
    expect(await store.messagesSince(0, 10)).toEqual([]);
    const r1 = await createRun(store, "r1", { owner: "me" });
    const r2 = await createRun(store, "r2");
    const m1 = await send(store, r1.id, "q", { n: 1 }, T0 + 1, "idem");
    const m2 = await send(store, r2.id, "q", { n: 2 }, T0 + 2);
    const m3 = await send(store, r1.id, "z", { n: 3 }, T0 + 3);
    await store.commit(
      batch(T0 + 4, {
        consume: [{ messageId: m1.id, runId: r1.id, bySeq: 1 }],
        leases: [{ runId: r1.id, owner: "me" }],
      }),
    );
    expect(await store.maxMessageId()).toBe(m3.id);
    expect(await store.listMessages(r1.id, { includeConsumed: true, limit: 10 })).toEqual([
      {
        id: m1.id,
        runId: r1.id,
        queue: "q",
        body: '{"n":1}',
        sentAt: T0 + 1,
        idempotencyKey: "idem",
        consumedAt: T0 + 4,
        consumedBy: 1,
      },
      {
        id: m3.id,
        runId: r1.id,
        queue: "z",
        body: '{"n":3}',
        sentAt: T0 + 3,
        idempotencyKey: null,
        consumedAt: null,
        consumedBy: null,
      },
    ]);
    expect((await store.listMessages(r1.id, { includeConsumed: true, limit: 1 })).map((m) => m.id)).toEqual([
      m1.id,
    ]);
    expect((await store.listMessages(r1.id, { includeConsumed: false, limit: 10 })).map((m) => m.id)).toEqual(
      [m3.id],
    );
    expect((await store.messagesSince(m1.id, 10)).map((m) => m.id)).toEqual([m2.id, m3.id]);
    expect((await store.messagesSince(0, 2)).map((m) => m.id)).toEqual([m1.id, m2.id]);
  });

  it("loads runs for execution: the row, every entry in order, unconsumed messages oldest first", async () => {
    const store = await (await backend.fresh()).open();
    const a = await createRun(store, "a", { owner: "me" });
    const b = await createRun(store, "b", { owner: "me" });
    await store.commit(
      batch(T0, {
        entries: [entry(a.id, 2), entry(a.id, 1), entry(b.id, 1)],
        leases: [
          { runId: a.id, owner: "me" },
          { runId: b.id, owner: "me" },
        ],
      }),
    );
    const m1 = await send(store, a.id, "q", 1);
    const m2 = await send(store, a.id, "p", 2);
    await store.commit(
      batch(T0, {
        consume: [{ messageId: m1.id, runId: a.id, bySeq: 2 }],
        leases: [{ runId: a.id, owner: "me" }],
      }),
    );
    const loaded = await store.loadRuns([b.id, 777_777, a.id]);
    expect(loaded.map((l) => l.run.key)).toEqual(["b", "a"]);
    expect(loaded[1]!.run).toEqual(await store.getRun(a.id));
    expect(loaded[1]!.entries.map((e) => e.seq)).toEqual([1, 2]);
    expect(replayFields(loaded[1]!.entries[0]!)).toEqual(replayFields(entry(a.id, 1)));
    expect(loaded[1]!.messages.map((m) => m.id)).toEqual([m2.id]);
    expect(loaded[0]!.messages).toEqual([]);
    expect(await store.loadRuns([])).toEqual([]);
  });

  it("loads a history for replay: completed steps without times, input, error and attempts, the rest whole, in seq order", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "history", { owner: "me" });
    const rows: EntryRow[] = [];
    // Plain completed steps across several of SQLite's packed ranges (4,096 seqs each), some in nested scopes.
    for (let seq = 1; seq <= 9000; seq++) {
      rows.push(
        entry(run.id, seq, {
          scope: seq % 3 === 0 ? "loop#2/join[b]" : "",
          name: `s${seq}-ünï`,
          output: seq % 7 === 0 ? null : JSON.stringify({ n: seq, s: "a\u001fb" }),
          attempts: `[{"n":1,"startedAt":${T0},"status":"completed"}]`,
          input: seq % 5 === 0 ? '{"in":1}' : null,
        }),
      );
    }
    const special: EntryRow[] = [
      entry(run.id, 9001, { detail: '{"rollback":{"order":3}}' }),
      entry(run.id, 9002, { stateSeq: 1, stateDiff: '{"/k":{"after":1}}' }),
      entry(run.id, 9003, { status: "running", attempts: '[{"n":1,"startedAt":1,"status":"running"}]' }),
      entry(run.id, 9004, { status: "failed", error: '{"name":"Error","message":"x"}', output: null }),
      entry(run.id, 9005, { kind: "sleep", status: "waiting", detail: '{"until":5}', output: null }),
      entry(run.id, 9006, { output: JSON.stringify("x".repeat(70_000)) }),
      entry(run.id, 9007, { kind: "join", detail: '{"branches":["a","b"]}' }),
    ];
    rows.push(...special);
    // Written out of order, in two batches.
    await store.commit(
      batch(T0, { entries: rows.slice(4500).reverse(), leases: [{ runId: run.id, owner: "me" }] }),
    );
    await store.commit(batch(T0, { entries: rows.slice(0, 4500), leases: [{ runId: run.id, owner: "me" }] }));

    const [loaded] = await store.loadRuns([run.id]);
    const entries = loaded!.entries;
    expect(entries.map((e) => e.seq)).toEqual(rows.map((r) => r.seq));
    expect(entries.map(replayFields)).toEqual(rows.map(replayFields));
    for (const [i, e] of entries.entries()) {
      const plain = rows[i]!.kind === "step" && rows[i]!.status === "completed";
      expect(isReplayEntry(e)).toBe(plain);
      if (plain) expect(() => e.attempts).toThrow(/loaded for replay without its attempts/);
      else expect({ ...e }).toEqual(rows[i]);
    }
    // The whole row stays one read away.
    expect(await store.getEntry(run.id, 5)).toEqual(rows[4]);
  });

  it("loads the other entries wherever they sit among the packed ranges, with gaps in the seqs", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "ranges", { owner: "me" });
    const other: Record<number, Partial<EntryRow>> = {
      3: { kind: "sleep", status: "waiting", detail: '{"until":5}', output: null },
      4096: { status: "running", attempts: '[{"n":1,"startedAt":1,"status":"running"}]', output: null },
      4500: { status: "failed", error: '{"name":"Error","message":"x"}', output: null },
      8193: { detail: '{"rollback":{"order":1}}' },
    };
    const rows: EntryRow[] = [];
    for (let seq = 1; seq <= 9000; seq++) {
      // Deleted entries (a bounded loop's old iterations) leave gaps, here in the second range.
      if (seq > 5000 && seq <= 5010) continue;
      rows.push(entry(run.id, seq, { name: `s${seq}`, output: String(seq), ...other[seq] }));
    }
    await store.commit(batch(T0, { entries: rows, leases: [{ runId: run.id, owner: "me" }] }));
    const [loaded] = await store.loadRuns([run.id]);
    expect(loaded!.entries.map(replayFields)).toEqual(rows.map(replayFields));
  });

  it("loads a history whose outputs hold the packing separator, unchanged", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "separator", { owner: "me" });
    // Not JSON.stringify's text (which escapes it), but stored text is what is read back.
    const rows = [1, 2, 3].map((seq) => entry(run.id, seq, { output: `"a\u001f${seq}\u001f"` }));
    await store.commit(batch(T0, { entries: rows, leases: [{ runId: run.id, owner: "me" }] }));
    const [loaded] = await store.loadRuns([run.id]);
    expect(loaded!.entries.map(replayFields)).toEqual(rows.map(replayFields));
  });

  it("loads a history whose names, scopes and outputs hold quotes, backslashes, commas and any text, unchanged", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "quoting", { owner: "me" });
    const texts = [
      '"',
      "\\",
      '\\"',
      ",",
      "],[",
      "null",
      "1,2",
      "é✓😀",
      "\u2028\u2029",
      "\u007f",
      "[[1]]",
      "]",
      "",
    ];
    const rows = texts.flatMap((t, i) => [
      entry(run.id, 2 * i + 1, { scope: i % 2 ? `loop#${i}/j[${t}]` : "", name: `n${i}${t}`, output: t }),
      entry(run.id, 2 * i + 2, { name: `m${i}`, output: JSON.stringify({ t, list: [t, 1.5, -0, 1e21] }) }),
    ]);
    await store.commit(batch(T0, { entries: rows, leases: [{ runId: run.id, owner: "me" }] }));
    const [loaded] = await store.loadRuns([run.id]);
    expect(loaded!.entries.map(replayFields)).toEqual(rows.map(replayFields));
    expect(loaded!.entries.every((e) => isReplayEntry(e))).toBe(true);
  });

  it("publishes workflow definitions: upsert by name and version, listed in order", async () => {
    const store = await (await backend.fresh()).open();
    const meta = (name: string, version: number, at: number) => ({
      name,
      version,
      description: `${name} v${version}`,
      queues: `{"q":{"type":"object"}}`,
      actions: '["getState"]',
      registeredAt: at,
    });
    await store.registerWorkflows([meta("zeta", 1, T0), meta("alpha", 2, T0), meta("alpha", 1, T0)]);
    await store.registerWorkflows([{ ...meta("zeta", 1, T0 + 5), description: null, actions: "[]" }]);
    await store.registerWorkflows([]);
    expect(await store.workflowMeta()).toEqual([
      meta("alpha", 1, T0),
      meta("alpha", 2, T0),
      { ...meta("zeta", 1, T0 + 5), description: null, actions: "[]" },
    ]);
  });
});

describe.each(BACKENDS)("$name store: other processes and opening", (backend) => {
  it("the change counter moves when another store commits, not for its own commits", async () => {
    const fresh = await backend.fresh();
    const [a, b] = [await fresh.open(), await fresh.open()];
    const run = await createRun(a, "x");
    const before = await b.changeCounter();
    const mine = await a.changeCounter();
    await send(a, run.id, "q", 1);
    expect(await a.changeCounter()).toBe(mine);
    await until(async () => (await b.changeCounter()) !== before, "the other store to notice the commit");
  });

  it("onChange, when offered, calls listeners for other stores' commits until unsubscribed", async () => {
    const fresh = await backend.fresh();
    const [a, b] = [await fresh.open(), await fresh.open()];
    if (!b.onChange) return; // optional (SQLite polls its data_version)
    let heard = 0;
    const off = b.onChange(() => heard++);
    const run = await createRun(a, "x");
    await until(() => heard > 0, "a change notification");
    const seen = heard;
    await send(b, run.id, "q", 1); // its own commit: no notification
    off();
    await send(a, run.id, "q", 2);
    await createRun(a, "y");
    // Give any stray notification time to arrive, with a third store as the witness.
    const c = await fresh.open();
    let witnessed = 0;
    c.onChange!(() => witnessed++);
    await createRun(a, "z");
    await until(() => witnessed > 0, "the witness to hear a commit");
    expect(heard).toBe(seen);
  });

  it("reopens a database with everything in it", async () => {
    const fresh = await backend.fresh();
    const first = await fresh.open();
    const run = await createRun(first, "keep", { input: '{"a":1}' });
    await first.close();
    const again = await fresh.open();
    expect(await again.getRun(run.id)).toEqual(run);
  });

  it("refuses a database written by a newer Waymark and leaves it unchanged", async () => {
    const fresh = await backend.fresh();
    const first = await fresh.open();
    await createRun(first, "keep");
    await first.close();
    await fresh.forgeNewerSchema(99);
    const err = await fresh.open().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: "STORAGE_NEWER_SCHEMA", details: { version: 99 } });
    expect((err as Error).message).toMatch(
      /newer Waymark \(schema version 99; this one understands up to \d+\)\. Upgrade Waymark/,
    );
  });

  it("refuses a database that holds another application's tables", async () => {
    const fresh = await backend.fresh();
    await fresh.addForeignTable();
    const err = await fresh.open().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: "STORAGE_FOREIGN_DATABASE" });
    expect((err as Error).message).toContain("invoices");
  });
});
