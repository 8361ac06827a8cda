// Store conformance, concurrency slots: claimDue gives a limited run a slot only while its key's running and
// retrying runs (plus older queued ones) are below its limit; a refused run is queued and not due; a run
// leaving running/retrying (commit or cancelRun) makes the oldest queued runs of its key due at once.
// Every test runs against SQLite and PostgreSQL alike.

import { describe, expect, it } from "vitest";
import type { RunRow, Store } from "../../src/storage/store.js";
import { BACKENDS, batch } from "./backends.js";
import { T0 } from "./fixtures.js";

async function limited(store: Store, key: string, customer: string, limit = 2, now = T0): Promise<RunRow> {
  const res = await store.commit(
    batch(now, {
      creates: [
        {
          workflow: "wf",
          key,
          version: 1,
          input: null,
          initialState: "{}",
          now,
          // Asked to claim at once: a limited run is never claimed at creation.
          owner: "creator",
          leaseUntil: now + 15_000,
          concurrency: { key: customer, limit },
        },
      ],
    }),
  );
  return res.created[0]!.run;
}

const keys = (rows: RunRow[]) => rows.map((r) => r.key).sort();

describe.each(BACKENDS)("$name store: concurrency slots", (backend) => {
  it("claims at most the limit per key, in creation order; the rest are queued, not due", async () => {
    const store = await (await backend.fresh()).open();
    const first = await limited(store, "a1", "c-9");
    expect(first).toMatchObject({
      status: "pending",
      owner: null,
      concurrencyKey: "c-9",
      concurrencyLimit: 2,
    });
    for (const k of ["a2", "a3", "a4"]) await limited(store, k, "c-9", 2, T0 + 1);
    await limited(store, "b1", "c-1", 2, T0 + 1);
    const claimed = await store.claimDue(T0 + 10, "me", T0 + 5000, 100, null);
    expect(keys(claimed)).toEqual(["a1", "a2", "b1"]);
    const a3 = (await store.findRun("wf", "a3"))!;
    expect(a3).toMatchObject({ status: "pending", owner: null, wakeAt: null, queuedAt: T0 + 10 });
    expect(await store.nextWakeAt(null)).toBe(T0 + 5000); // queued runs are not due: nothing spins on them
    expect(await store.claimDue(T0 + 20, "other", T0 + 5000, 100, null)).toEqual([]);
    expect(await store.concurrencyQueue(a3.id)).toMatchObject({
      key: "c-9",
      limit: 2,
      holderCount: 2,
      holders: [{ key: "a1" }, { key: "a2" }],
      ahead: 0,
    });
    expect((await store.concurrencyQueue((await store.findRun("wf", "a4"))!.id))?.ahead).toBe(1);

    // a1 completes: exactly the oldest queued run (a3) becomes due; a4 stays queued.
    await store.commit(
      batch(T0 + 30, {
        runs: [
          {
            id: first.id,
            status: "completed",
            owner: null,
            leaseUntil: null,
            wakeAt: null,
            finishedAt: T0 + 30,
          },
        ],
        leases: [{ runId: first.id, owner: "me" }],
      }),
    );
    expect((await store.findRun("wf", "a3"))!.wakeAt).toBe(T0 + 30);
    expect((await store.findRun("wf", "a4"))!.wakeAt).toBeNull();
    expect(keys(await store.claimDue(T0 + 40, "other", T0 + 5000, 100, null))).toEqual(["a3"]);
    expect((await store.findRun("wf", "a3"))!.queuedAt).toBeNull();
  });

  it("a sleeping run gives its slot up and queues for one when it wakes; a retrying run keeps it", async () => {
    const store = await (await backend.fresh()).open();
    const a = await limited(store, "a", "k", 1);
    const b = await limited(store, "b", "k", 1, T0 + 1);
    expect(keys(await store.claimDue(T0 + 10, "me", T0 + 5000, 100, null))).toEqual(["a"]);
    // a retries (backoff): b stays queued.
    await store.commit(
      batch(T0 + 20, {
        runs: [{ id: a.id, status: "retrying", owner: null, leaseUntil: null, wakeAt: T0 + 100 }],
        leases: [{ runId: a.id, owner: "me" }],
      }),
    );
    expect((await store.getRun(b.id))!.wakeAt).toBeNull();
    expect(keys(await store.claimDue(T0 + 100, "me", T0 + 5000, 100, null))).toEqual(["a"]);
    // a sleeps: b gets the slot; when a wakes it queues behind b.
    await store.commit(
      batch(T0 + 110, {
        runs: [{ id: a.id, status: "sleeping", owner: null, leaseUntil: null, wakeAt: T0 + 200 }],
        leases: [{ runId: a.id, owner: "me" }],
      }),
    );
    expect(keys(await store.claimDue(T0 + 120, "me", T0 + 5000, 100, null))).toEqual(["b"]);
    expect(await store.claimDue(T0 + 200, "me", T0 + 5000, 100, null)).toEqual([]);
    expect(await store.getRun(a.id)).toMatchObject({ status: "sleeping", wakeAt: null, queuedAt: T0 + 200 });
    // b is cancelled: a is due again and takes the slot.
    expect(await store.cancelRun(b.id, T0 + 300, "me", JSON.stringify({ message: "test" }))).toBe(true);
    expect((await store.getRun(a.id))!.wakeAt).toBe(T0 + 300);
    expect(keys(await store.claimDue(T0 + 300, "me", T0 + 5000, 100, null))).toEqual(["a"]);
  });

  it("an expired slot holder is claimed again without a new slot; its key's queued runs keep waiting", async () => {
    const store = await (await backend.fresh()).open();
    await limited(store, "a", "k", 1);
    await limited(store, "b", "k", 1, T0 + 1);
    expect(keys(await store.claimDue(T0 + 10, "dead", T0 + 1000, 100, null))).toEqual(["a"]);
    // The lease lapses: another owner takes a over (it keeps the slot), b still waits.
    const taken = await store.claimDue(T0 + 2000, "me", T0 + 7000, 100, null);
    expect(taken.map((r) => [r.key, r.takenFrom])).toEqual([["a", "dead"]]);
    expect((await store.findRun("wf", "b"))!.owner).toBeNull();
  });
});
