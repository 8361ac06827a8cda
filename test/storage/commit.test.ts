// Store conformance, writes: what one `commit(batch)` stores, and that a failing batch stores nothing.
// Every test runs against SQLite and PostgreSQL alike.

import { describe, expect, it } from "vitest";
import { LeaseLostError, StorageError } from "../../src/errors.js";
import { BACKENDS, batch } from "./backends.js";
import { createRun, entry, send, suspend, T0 } from "./fixtures.js";

describe.each(BACKENDS)("$name store: commit", (backend) => {
  it("answers a create with the stored row, every optional field set", async () => {
    const store = await (await backend.fresh()).open();
    const create = (key: string, extra: object) => ({
      workflow: "wf",
      key,
      version: 3,
      input: '{"q":"\\u0000?"}',
      initialState: '{"s":1}',
      now: T0,
      owner: "me",
      leaseUntil: T0 + 100,
      ...extra,
    });
    const [parent] = (await store.commit(batch(T0, { creates: [create("p", {})] }))).created;
    const { created } = await store.commit(
      batch(T0 + 1, {
        creates: [
          create("child", {
            traceContext: "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01",
            parentRunId: parent!.run.id,
            tags: { customer: "c-9" },
          }),
          create("limited", { concurrency: { key: "c-9", limit: 2 } }),
        ],
      }),
    );
    for (const c of [parent!, ...created]) expect(c.run).toEqual(await store.getRun(c.run.id));
    expect(created[1]!.run).toMatchObject({ owner: null, status: "pending", concurrencyKey: "c-9" });
  });

  it("creates runs idempotently by workflow and key, claimed or left for the scheduler", async () => {
    const store = await (await backend.fresh()).open();
    const res = await store.commit(
      batch(T0, {
        creates: [
          {
            workflow: "wf",
            key: "a",
            version: 2,
            input: '{"x":1}',
            initialState: "{}",
            now: T0,
            owner: null,
            leaseUntil: null,
          },
          {
            workflow: "wf",
            key: "b",
            version: 1,
            input: null,
            initialState: '{"n":0}',
            now: T0,
            owner: "me",
            leaseUntil: T0 + 500,
          },
          {
            workflow: "wf",
            key: "a",
            version: 2,
            input: '{"x":2}',
            initialState: "{}",
            now: T0,
            owner: null,
            leaseUntil: null,
          },
        ],
      }),
    );
    const [a, b, again] = res.created;
    expect(a).toMatchObject({
      created: true,
      run: { workflow: "wf", key: "a", version: 2, status: "pending" },
    });
    expect(a!.run).toMatchObject({
      input: '{"x":1}',
      state: "{}",
      initialState: "{}",
      wakeAt: T0,
      owner: null,
    });
    expect(a!.run).toMatchObject({
      leaseUntil: null,
      createdAt: T0,
      updatedAt: T0,
      finishedAt: null,
      output: null,
    });
    expect(b).toMatchObject({
      created: true,
      run: { status: "running", owner: "me", leaseUntil: T0 + 500, wakeAt: T0 + 500 },
    });
    expect(again).toEqual({ created: false, run: a!.run });
    expect(b!.run.id).toBeGreaterThan(a!.run.id);
    // What a create answers is the stored row, every field (SQLite builds it instead of reading it back).
    expect(a!.run).toEqual(await store.getRun(a!.run.id));
    expect(b!.run).toEqual(await store.getRun(b!.run.id));

    const later = await store.commit(
      batch(T0 + 1, {
        creates: [
          {
            workflow: "wf",
            key: "b",
            version: 9,
            input: null,
            initialState: "{}",
            now: T0 + 1,
            owner: null,
            leaseUntil: null,
          },
          {
            workflow: "other",
            key: "a",
            version: 1,
            input: null,
            initialState: "{}",
            now: T0 + 1,
            owner: null,
            leaseUntil: null,
          },
        ],
      }),
    );
    expect(later.created[0]).toEqual({ created: false, run: b!.run });
    expect(later.created[1]!.created).toBe(true);
    expect(later.created[1]!.run.id).toBeGreaterThan(b!.run.id);
    expect(await store.findRun("wf", "a")).toEqual(a!.run);
    expect(await store.getRun(b!.run.id)).toEqual(b!.run);
    expect(await store.getRun(999_999)).toBeUndefined();
    expect(await store.findRun("wf", "nope")).toBeUndefined();
  });

  it("keeps JSON text exactly as given, byte for byte", async () => {
    const store = await (await backend.fresh()).open();
    const texts = [
      '{ "spaced" : [1, 2.50, 1e3] }',
      JSON.stringify({ s: 'é ü 漢字 🚀 \u2028 \\u0000 "quoted" \n tab\t' }),
      JSON.stringify("x".repeat(1_000_000)),
      "null",
      '"a string"',
    ];
    const run = await createRun(store, "json", { input: texts[1]!, owner: "me" });
    await store.commit(
      batch(T0, {
        entries: texts.map((t, i) =>
          entry(run.id, i + 1, { input: t, output: t, detail: t, attempts: t, stateDiff: t, error: t }),
        ),
        runs: [{ id: run.id, state: texts[0]!, output: texts[2]!, error: texts[1]!, waiting: texts[4]! }],
        leases: [{ runId: run.id, owner: "me" }],
      }),
    );
    const row = (await store.getRun(run.id))!;
    expect(row.input).toBe(texts[1]);
    expect([row.state, row.output, row.error, row.waiting]).toEqual([texts[0], texts[2], texts[1], texts[4]]);
    const entries = await store.allEntries(run.id);
    entries.forEach((e, i) => {
      for (const field of [e.input, e.output, e.detail, e.attempts, e.stateDiff, e.error])
        expect(field).toBe(texts[i]);
    });
  });

  it("upserts entries whole, deletes and truncates them; reads them in seq order", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "e", { owner: "me" });
    const lease = [{ runId: run.id, owner: "me" }];
    await store.commit(
      batch(T0, {
        entries: [entry(run.id, 3), entry(run.id, 1, { status: "running", output: null }), entry(run.id, 2)],
        leases: lease,
      }),
    );
    expect((await store.allEntries(run.id)).map((e) => e.seq)).toEqual([1, 2, 3]);
    const full = entry(run.id, 1, {
      scope: "fan[a]",
      ordinal: 7,
      name: "renamed",
      kind: "sleep",
      status: "completed",
      startedAt: null,
      endedAt: T0 + 99,
      input: "1",
      output: "2",
      error: '{"message":"x"}',
      attempts: "[]",
      detail: '{"d":1}',
      stateSeq: 4,
      stateDiff: '[{"path":["n"],"before":0,"after":1}]',
    });
    await store.commit(batch(T0, { entries: [full], leases: lease }));
    expect(await store.getEntry(run.id, 1)).toEqual(full);
    expect(await store.getEntry(run.id, 42)).toBeUndefined();
    // Later writes of the same entry in one batch: the last wins.
    await store.commit(
      batch(T0, {
        entries: [entry(run.id, 4, { status: "running" }), entry(run.id, 4, { status: "completed" })],
        leases: lease,
      }),
    );
    expect((await store.getEntry(run.id, 4))!.status).toBe("completed");

    expect((await store.listEntries(run.id, 0, 2)).map((e) => e.seq)).toEqual([1, 2]);
    expect((await store.listEntries(run.id, 2, 10)).map((e) => e.seq)).toEqual([3, 4]);

    await store.commit(
      batch(T0, {
        deleteEntries: [
          { runId: run.id, seqs: [3, 4] },
          { runId: run.id, seqs: [1] },
        ],
        entries: [entry(run.id, 3, { name: "again" })],
        leases: lease,
      }),
    );
    expect((await store.allEntries(run.id)).map((e) => [e.seq, e.name])).toEqual([
      [2, "s2"],
      [3, "again"],
    ]);
  });

  it("patches only the fields present, null included", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "p", { owner: "me" });
    const other = await createRun(store, "q", { owner: "me" });
    await store.commit(
      batch(T0 + 5, {
        runs: [
          { id: run.id, state: '{"n":1}', updatedAt: T0 + 5 },
          {
            id: other.id,
            status: "completed",
            output: '"done"',
            owner: null,
            leaseUntil: null,
            wakeAt: null,
            finishedAt: T0 + 5,
          },
        ],
        leases: [
          { runId: run.id, owner: "me" },
          { runId: other.id, owner: "me" },
        ],
      }),
    );
    expect(await store.getRun(run.id)).toEqual({ ...run, state: '{"n":1}', updatedAt: T0 + 5 });
    expect(await store.getRun(other.id)).toEqual({
      ...other,
      status: "completed",
      output: '"done"',
      owner: null,
      leaseUntil: null,
      wakeAt: null,
      finishedAt: T0 + 5,
    });
    await store.commit(
      batch(T0 + 6, { runs: [{ id: run.id, version: 3, error: null, waiting: '[{"kind":"sleep"}]' }] }),
    );
    expect(await store.getRun(run.id)).toMatchObject({
      version: 3,
      waiting: '[{"kind":"sleep"}]',
      state: '{"n":1}',
    });
  });

  it("consumes a message once; a second consume aborts the whole batch", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "c", { owner: "me" });
    const m = await send(store, run.id, "q", { a: 1 });
    const lease = [{ runId: run.id, owner: "me" }];
    await store.commit(
      batch(T0 + 10, {
        consume: [{ messageId: m.id, runId: run.id, bySeq: 2 }],
        entries: [entry(run.id, 2)],
        leases: lease,
      }),
    );
    const [consumed] = await store.listMessages(run.id, { includeConsumed: true, limit: 10 });
    expect(consumed).toMatchObject({
      id: m.id,
      consumedAt: T0 + 10,
      consumedBy: 2,
      body: '{"a":1}',
      queue: "q",
    });
    expect(await store.listMessages(run.id, { includeConsumed: false, limit: 10 })).toEqual([]);

    const err = await store
      .commit(
        batch(T0 + 20, {
          entries: [entry(run.id, 3)],
          creates: [
            {
              workflow: "wf",
              key: "ghost",
              version: 1,
              input: null,
              initialState: "{}",
              now: T0,
              owner: null,
              leaseUntil: null,
            },
          ],
          consume: [{ messageId: m.id, runId: run.id, bySeq: 3 }],
          leases: lease,
        }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StorageError);
    expect(err).toMatchObject({ code: "MESSAGE_ALREADY_CONSUMED", details: { messageId: m.id } });
    expect(await store.getEntry(run.id, 3)).toBeUndefined();
    expect(await store.findRun("wf", "ghost")).toBeUndefined();

    // A message of another run cannot be consumed by this one either.
    const other = await createRun(store, "other");
    const m2 = await send(store, other.id, "q", {});
    await expect(
      store.commit(batch(T0, { consume: [{ messageId: m2.id, runId: run.id, bySeq: 4 }], leases: lease })),
    ).rejects.toMatchObject({ code: "MESSAGE_ALREADY_CONSUMED" });

    // Unconsume puts it back (replay); then it can be consumed again.
    await store.commit(batch(T0 + 30, { unconsume: [m.id], leases: lease }));
    expect(await store.listMessages(run.id, { includeConsumed: false, limit: 10 })).toMatchObject([
      { id: m.id, consumedAt: null, consumedBy: null },
    ]);
    await store.commit(
      batch(T0 + 40, { consume: [{ messageId: m.id, runId: run.id, bySeq: 5 }], leases: lease }),
    );
    expect((await store.listMessages(run.id, { includeConsumed: true, limit: 1 }))[0]!.consumedBy).toBe(5);
  });

  it("refuses a batch for a run leased by someone else with LeaseLostError naming the run; nothing lands", async () => {
    const store = await (await backend.fresh()).open();
    const mine = await createRun(store, "mine", { owner: "me" });
    const theirs = await createRun(store, "theirs", { owner: "them" });
    const err = await store
      .commit(
        batch(T0, {
          entries: [entry(mine.id, 1), entry(theirs.id, 1)],
          runs: [{ id: mine.id, state: '{"n":5}' }],
          messages: [{ runId: mine.id, queue: "q", body: "{}", idempotencyKey: null, now: T0 }],
          leases: [
            { runId: mine.id, owner: "me" },
            { runId: theirs.id, owner: "me" },
          ],
        }),
      )
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LeaseLostError);
    expect(err).toMatchObject({ runId: theirs.id, code: "LEASE_LOST", details: { owner: "them" } });
    expect((err as Error).message).toContain(`Run #${theirs.id}`);
    expect(await store.allEntries(mine.id)).toEqual([]);
    expect((await store.getRun(mine.id))!.state).toBe('{"n":0}');
    expect(await store.maxMessageId()).toBe(0);

    // A run with no owner, or no run at all, is lost too.
    await store.commit(batch(T0, { runs: [{ id: mine.id, owner: null, leaseUntil: null }] }));
    await expect(
      store.commit(batch(T0, { entries: [entry(mine.id, 1)], leases: [{ runId: mine.id, owner: "me" }] })),
    ).rejects.toMatchObject({ runId: mine.id, details: { owner: null } });
    await expect(
      store.commit(batch(T0, { leases: [{ runId: 987_654, owner: "me" }] })),
    ).rejects.toBeInstanceOf(LeaseLostError);
  });

  it("stores a message once per idempotency key and hands back the first id", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "m");
    const other = await createRun(store, "n");
    const res = await store.commit(
      batch(T0, {
        messages: [
          { runId: run.id, queue: "q", body: "1", idempotencyKey: "k", now: T0 },
          { runId: run.id, queue: "q", body: "2", idempotencyKey: null, now: T0 + 1 },
          { runId: run.id, queue: "q", body: "3", idempotencyKey: "k", now: T0 + 2 },
          { runId: other.id, queue: "q", body: "4", idempotencyKey: "k", now: T0 + 3 },
        ],
      }),
    );
    const [first, plain, dupe, otherRun] = res.messages;
    expect(first!.duplicate).toBe(false);
    expect(plain!.id).toBeGreaterThan(first!.id);
    expect(dupe).toEqual({ id: first!.id, duplicate: true });
    expect(otherRun!.duplicate).toBe(false);
    expect(otherRun!.id).toBeGreaterThan(plain!.id);
    expect(await send(store, run.id, "q", 5, T0, "k")).toEqual({ id: first!.id, duplicate: true });
    const stored = await store.listMessages(run.id, { includeConsumed: true, limit: 10 });
    expect(stored.map((m) => [m.body, m.sentAt, m.idempotencyKey])).toEqual([
      ["1", T0, "k"],
      ["2", T0 + 1, null],
    ]);
    expect((await store.messageByKey(run.id, "k"))?.body).toBe("1");
    expect((await store.messageByKey(other.id, "k"))?.body).toBe("4");
    expect(await store.messageByKey(run.id, "nope")).toBeUndefined();
    // One message by id, whichever run holds it; an id never used reads as none.
    expect(await store.getMessage(otherRun!.id)).toMatchObject({ runId: other.id, body: "4", queue: "q" });
    expect((await store.getMessage(first!.id))?.body).toBe("1");
    expect(await store.getMessage(otherRun!.id + 100)).toBeUndefined();
  });

  it("keeps requests in order, wakes their idle run, and records what became of them", async () => {
    const store = await (await backend.fresh()).open();
    const idle = await createRun(store, "idle");
    await store.commit(batch(T0, { runs: [{ id: idle.id, status: "sleeping", wakeAt: T0 + 60_000 }] }));
    const busy = await createRun(store, "busy", { owner: "me", leaseUntil: T0 + 15_000 });
    const res = await store.commit(
      batch(T0 + 100, {
        requests: [
          { runId: idle.id, kind: "cancel", args: "{}" },
          { runId: busy.id, kind: "replay", args: '{"fromStep":"a"}' },
          { runId: idle.id, kind: "replay", args: "{}" },
        ],
      }),
    );
    expect(res.requests).toHaveLength(3);
    expect([...res.requests].sort((a, b) => a - b)).toEqual(res.requests);
    expect((await store.getRun(idle.id))!.wakeAt).toBe(T0 + 100);
    expect((await store.getRun(busy.id))!.wakeAt).toBe(T0 + 15_000);

    expect(await store.getRequest(res.requests[1]!)).toEqual({
      id: res.requests[1],
      runId: busy.id,
      kind: "replay",
      args: '{"fromStep":"a"}',
      createdAt: T0 + 100,
      doneAt: null,
      result: null,
    });
    expect((await store.pendingRequests(null, 10)).map((r) => r.id)).toEqual(res.requests);
    expect((await store.pendingRequests(null, 2)).map((r) => r.id)).toEqual(res.requests.slice(0, 2));
    expect((await store.pendingRequests([idle.id], 10)).map((r) => r.id)).toEqual([
      res.requests[0],
      res.requests[2],
    ]);
    expect(await store.pendingRequests([], 10)).toEqual([]);
    // Several runs at once (the change watcher asks for every run executing here): theirs, oldest first.
    const several = await store.pendingRequests([busy.id, idle.id, 987_654], 10);
    expect(several.map((r) => [r.runId, r.id])).toEqual([
      [idle.id, res.requests[0]],
      [busy.id, res.requests[1]],
      [idle.id, res.requests[2]],
    ]);

    await store.commit(batch(T0 + 200, { requestsDone: [{ id: res.requests[0]!, result: '{"ok":true}' }] }));
    expect(await store.getRequest(res.requests[0]!)).toMatchObject({
      doneAt: T0 + 200,
      result: '{"ok":true}',
    });
    expect((await store.pendingRequests(null, 10)).map((r) => r.id)).toEqual(res.requests.slice(1));
    expect(await store.getRequest(123_456)).toBeUndefined();
  });

  it("keeps refused messages, newest first", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "r");
    await store.commit(
      batch(T0, {
        rejections: [
          { runId: run.id, queue: "q", body: '{"bad":1}', error: "first", at: T0 },
          { runId: run.id, queue: "nope", body: "x".repeat(2000), error: "second", at: T0 + 1 },
        ],
      }),
    );
    await store.commit(
      batch(T0, { rejections: [{ runId: run.id, queue: "q", body: "{}", error: "third", at: T0 + 2 }] }),
    );
    const all = await store.listRejections(run.id, 10);
    expect(all.map((r) => r.error)).toEqual(["third", "second", "first"]);
    expect(all[1]).toMatchObject({ runId: run.id, queue: "nope", body: "x".repeat(2000), at: T0 + 1 });
    expect((await store.listRejections(run.id, 1)).map((r) => r.error)).toEqual(["third"]);
    expect(await store.listRejections(run.id + 1, 10)).toEqual([]);
  });

  it("a message wakes its run when it waits on that queue, and only then", async () => {
    const store = await (await backend.fresh()).open();
    const waiting = await createRun(store, "w", { owner: "me" });
    await suspend(store, waiting, "me", T0, { waitQueues: "|a|b|", wakeAt: T0 + 86_400_000 });
    const other = await createRun(store, "o", { owner: "me" });
    await suspend(store, other, "me", T0, { waitQueues: "|a|", wakeAt: null });
    const owned = await createRun(store, "x", { owner: "me", leaseUntil: T0 + 15_000 });

    await send(store, waiting.id, "c", {}, T0 + 5); // not a queue it waits on
    await send(store, other.id, "ab", {}, T0 + 5); // a name that merely contains "a"
    await send(store, owned.id, "a", {}, T0 + 5); // executing: its owner gets it
    expect((await store.getRun(waiting.id))!.wakeAt).toBe(T0 + 86_400_000);
    expect((await store.getRun(other.id))!.wakeAt).toBeNull();
    expect((await store.getRun(owned.id))!.wakeAt).toBe(T0 + 15_000);

    await send(store, waiting.id, "b", {}, T0 + 7);
    await send(store, other.id, "a", {}, T0 + 8);
    expect((await store.getRun(waiting.id))!.wakeAt).toBe(T0 + 7);
    expect((await store.getRun(other.id))!.wakeAt).toBe(T0 + 8);
    // An earlier wake-up is never pushed back.
    await send(store, waiting.id, "a", {}, T0 + 9);
    expect((await store.getRun(waiting.id))!.wakeAt).toBe(T0 + 7);
  });

  it("a suspension wakes its run at once when a message already waits on one of its queues", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "s", { owner: "me" });
    await send(store, run.id, "late", {}, T0 + 1);
    await suspend(store, run, "me", T0 + 2, { waitQueues: "|other|", wakeAt: null });
    expect((await store.getRun(run.id))!.wakeAt).toBeNull();

    await store.commit(batch(T0 + 3, { runs: [{ id: run.id, owner: "me", leaseUntil: T0 + 100 }] }));
    await suspend(store, run, "me", T0 + 4, { waitQueues: "|other|late|", wakeAt: T0 + 999 });
    expect(await store.getRun(run.id)).toMatchObject({ wakeAt: T0 + 4, status: "waiting", owner: null });
  });
});
