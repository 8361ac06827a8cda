// Store conformance, scheduling: claiming due runs, leases, takeover, cancel, wake-ups.
// Every test runs against SQLite and PostgreSQL alike.

import { describe, expect, it } from "vitest";
import type { RunRow, Store } from "../../src/storage/store.js";
import { BACKENDS, batch } from "./backends.js";
import { createRun, entry, suspend, T0 } from "./fixtures.js";

async function sleeping(store: Store, key: string, wakeAt: number | null, workflow = "wf"): Promise<RunRow> {
  const run = await createRun(store, key, { owner: "setup", workflow });
  await suspend(store, run, "setup", T0, { status: "sleeping", wakeAt });
  return (await store.getRun(run.id))!;
}

const REASON = JSON.stringify({
  name: "Cancelled",
  message: "cancelled by a test",
  details: { by: "a test" },
});

describe.each(BACKENDS)("$name store: claims and leases", (backend) => {
  it("claims due runs, earliest first: owner, lease, status running, waits cleared", async () => {
    const store = await (await backend.fresh()).open();
    const late = await sleeping(store, "late", T0 + 300);
    const early = await sleeping(store, "early", T0 + 100);
    await sleeping(store, "future", T0 + 10_000);
    await sleeping(store, "never", null);
    const waiting = await createRun(store, "waiting", { owner: "setup" });
    await suspend(store, waiting, "setup", T0, { waitQueues: "|q|", wakeAt: T0 + 200 });

    expect(await store.claimDue(T0 + 50, "me", T0 + 5000, 10, null)).toEqual([]);
    const one = await store.claimDue(T0 + 1000, "me", T0 + 6000, 1, null);
    expect(one.map((r) => r.key)).toEqual(["early"]);
    expect(one[0]).toEqual({
      ...early,
      status: "running",
      owner: "me",
      leaseUntil: T0 + 6000,
      wakeAt: T0 + 6000,
      waiting: null,
      waitQueues: null,
      updatedAt: T0 + 1000,
      takenFrom: null,
    });
    const rest = await store.claimDue(T0 + 1000, "me", T0 + 6000, 10, null);
    expect(rest.map((r) => r.key).sort()).toEqual(["late", "waiting"]);
    expect(rest.find((r) => r.key === "waiting")).toMatchObject({
      status: "running",
      waitQueues: null,
      waiting: null,
    });
    expect(await store.getRun(late.id)).toMatchObject({ owner: "me", status: "running" });
    expect(await store.claimDue(T0 + 1000, "other", T0 + 6000, 10, null)).toEqual([]);
  });

  it("leaves a finished run's status alone when claiming it (a request woke it)", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "done", { owner: "me" });
    await store.commit(
      batch(T0, {
        runs: [
          {
            id: run.id,
            status: "completed",
            owner: null,
            leaseUntil: null,
            wakeAt: null,
            waiting: "[]",
            finishedAt: T0,
          },
        ],
        leases: [{ runId: run.id, owner: "me" }],
      }),
    );
    await store.commit(batch(T0 + 1, { requests: [{ runId: run.id, kind: "replay", args: "{}" }] }));
    const [claimed] = await store.claimDue(T0 + 2, "me", T0 + 100, 10, null);
    expect(claimed).toMatchObject({ id: run.id, status: "completed", owner: "me", waiting: "[]" });
  });

  it("claims only the workflows it is given; the next wake-up honours them too", async () => {
    const store = await (await backend.fresh()).open();
    await sleeping(store, "i1", T0 + 10, "invoice");
    await sleeping(store, "r1", T0 + 5, "report");
    await sleeping(store, "a1", T0 + 7, "audit");
    expect(await store.nextWakeAt(null)).toBe(T0 + 5);
    expect(await store.nextWakeAt(["invoice"])).toBe(T0 + 10);
    expect(await store.nextWakeAt(["invoice", "audit"])).toBe(T0 + 7);
    expect(await store.nextWakeAt(["nothing"])).toBeNull();
    expect(await store.nextWakeAt([])).toBeNull();
    const got = await store.claimDue(T0 + 100, "inv", T0 + 1000, 10, ["invoice"]);
    expect(got.map((r) => r.key)).toEqual(["i1"]);
    expect(await store.claimDue(T0 + 100, "none", T0 + 1000, 10, [])).toEqual([]);
    expect((await store.claimDue(T0 + 100, "all", T0 + 1000, 10, null)).map((r) => r.key).sort()).toEqual([
      "a1",
      "r1",
    ]);
  });

  it("takes over a run whose owner's lease expired, never one still leased, never its own expired lease", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "leased", { owner: "a", leaseUntil: T0 + 1000 });
    expect(await store.claimDue(T0 + 999, "b", T0 + 5000, 10, null)).toEqual([]);
    expect(await store.claimDue(T0 + 1000, "a", T0 + 5000, 10, null)).toEqual([]);
    const [taken] = await store.claimDue(T0 + 1000, "b", T0 + 5000, 10, null);
    expect(taken).toMatchObject({
      id: run.id,
      owner: "b",
      leaseUntil: T0 + 5000,
      wakeAt: T0 + 5000,
      takenFrom: "a",
    });
    // The old owner's writes are refused from now on.
    await expect(
      store.commit(
        batch(T0 + 1001, { entries: [entry(run.id, 1)], leases: [{ runId: run.id, owner: "a" }] }),
      ),
    ).rejects.toMatchObject({ code: "LEASE_LOST", runId: run.id, details: { owner: "b" } });
  });

  it("renews an owner's leases, lists owners, and expires a dead owner's runs at once", async () => {
    const store = await (await backend.fresh()).open();
    const a1 = await createRun(store, "a1", { owner: "a", leaseUntil: T0 + 100 });
    const a2 = await createRun(store, "a2", { owner: "a", leaseUntil: T0 + 200 });
    const b1 = await createRun(store, "b1", { owner: "b", leaseUntil: T0 + 300 });
    await createRun(store, "free");

    // Only the listed runs are renewed, and only if this owner holds them; it says which it renewed.
    expect((await store.renewLeases("a", T0 + 5000, [a1.id, a2.id, b1.id])).sort((x, y) => x - y)).toEqual(
      [a1.id, a2.id].sort((x, y) => x - y),
    );
    expect(await store.getRun(a1.id)).toMatchObject({ leaseUntil: T0 + 5000, wakeAt: T0 + 5000, owner: "a" });
    expect(await store.getRun(a2.id)).toMatchObject({ leaseUntil: T0 + 5000, wakeAt: T0 + 5000 });
    expect(await store.getRun(b1.id)).toMatchObject({ leaseUntil: T0 + 300, wakeAt: T0 + 300 });
    expect(await store.renewLeases("a", T0 + 6000, [a1.id])).toEqual([a1.id]);
    expect(await store.getRun(a2.id)).toMatchObject({ leaseUntil: T0 + 5000 });
    const owners = await store.owners();
    expect(owners.sort((x, y) => x.owner.localeCompare(y.owner))).toEqual([
      { owner: "a", leaseUntil: T0 + 6000 },
      { owner: "b", leaseUntil: T0 + 300 },
    ]);

    expect(await store.expireOwner("a", T0 + 50)).toBe(2);
    expect(await store.expireOwner("nobody", T0 + 50)).toBe(0);
    expect(await store.getRun(a1.id)).toMatchObject({ leaseUntil: T0 + 50, wakeAt: T0 + 50 });
    const claimed = await store.claimDue(T0 + 50, "c", T0 + 9000, 10, null);
    expect(claimed.map((r) => r.key).sort()).toEqual(["a1", "a2", "free"]);
  });

  it("claims one run for replay if unowned, already its own, or its lease expired", async () => {
    const store = await (await backend.fresh()).open();
    const free = await createRun(store, "free");
    const leased = await createRun(store, "leased", { owner: "a", leaseUntil: T0 + 1000 });
    expect(await store.claimRun(free.id, "me", T0 + 60_000, T0)).toBe(true);
    expect(await store.getRun(free.id)).toMatchObject({
      owner: "me",
      leaseUntil: T0 + 60_000,
      wakeAt: T0 + 60_000,
    });
    expect(await store.claimRun(free.id, "me", T0 + 70_000, T0)).toBe(true);
    expect(await store.claimRun(free.id, "other", T0 + 70_000, T0)).toBe(false);
    expect(await store.claimRun(leased.id, "me", T0 + 60_000, T0 + 999)).toBe(false);
    expect(await store.claimRun(leased.id, "me", T0 + 60_000, T0 + 1000)).toBe(true);
    expect(await store.claimRun(424_242, "me", T0, T0)).toBe(false);
  });

  it("cancels a run it may (unowned, its own, lease expired): unfinished entries cancelled, wake-up cleared", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "c", { owner: "me" });
    await store.commit(
      batch(T0, {
        entries: [
          entry(run.id, 1),
          entry(run.id, 2, { status: "running", endedAt: null }),
          entry(run.id, 3, { status: "waiting", endedAt: null, kind: "queue" }),
          entry(run.id, 4, { status: "retrying", endedAt: null }),
          entry(run.id, 5, { status: "failed" }),
        ],
        leases: [{ runId: run.id, owner: "me" }],
      }),
    );
    await suspend(store, run, "me", T0, { waitQueues: "|q|", wakeAt: T0 + 500 });
    expect(await store.cancelRun(run.id, T0 + 10, "someone", REASON)).toBe(true);
    expect(await store.getRun(run.id)).toMatchObject({
      status: "cancelled",
      error: REASON,
      finishedAt: T0 + 10,
      updatedAt: T0 + 10,
      wakeAt: null,
      waiting: null,
      waitQueues: null,
      owner: null,
      leaseUntil: null,
    });
    expect((await store.allEntries(run.id)).map((e) => [e.status, e.endedAt])).toEqual([
      ["completed", T0 + 2],
      ["cancelled", T0 + 10],
      ["cancelled", T0 + 10],
      ["cancelled", T0 + 10],
      ["failed", T0 + 6],
    ]);
    expect(await store.cancelRun(run.id, T0 + 20, "someone", REASON)).toBe(false); // finished

    const leased = await createRun(store, "l", { owner: "a", leaseUntil: T0 + 1000 });
    expect(await store.cancelRun(leased.id, T0 + 500, "b", REASON)).toBe(false);
    expect((await store.getRun(leased.id))!.status).toBe("running");
    expect(await store.cancelRun(leased.id, T0 + 500, "a", REASON)).toBe(true);
    const expired = await createRun(store, "e", { owner: "a", leaseUntil: T0 + 1000 });
    expect(await store.cancelRun(expired.id, T0 + 1000, "b", REASON)).toBe(true);
  });

  it("two stores claiming at once never claim one run twice", async () => {
    const fresh = await backend.fresh();
    const [a, b] = [await fresh.open(), await fresh.open()];
    const N = 200;
    await a.commit(
      batch(T0, {
        creates: Array.from({ length: N }, (_, i) => ({
          workflow: "wf",
          key: `k${i}`,
          version: 1,
          input: null,
          initialState: "{}",
          now: T0,
          owner: null,
          leaseUntil: null,
        })),
      }),
    );
    const claimAll = async (store: Store, owner: string) => {
      const got: number[] = [];
      for (;;) {
        const rows = await store.claimDue(T0 + 1, owner, T0 + 60_000, 7, null);
        if (rows.length === 0) return got;
        got.push(...rows.map((r) => r.id));
      }
    };
    const [fromA, fromB] = await Promise.all([claimAll(a, "a"), claimAll(b, "b")]);
    expect(fromA.length + fromB.length).toBe(N);
    expect(new Set([...fromA, ...fromB]).size).toBe(N);
    const owners = await a.owners();
    expect(owners.map((o) => o.owner).sort()).toEqual(
      [fromA.length ? "a" : null, fromB.length ? "b" : null].filter(Boolean),
    );
  });
});
