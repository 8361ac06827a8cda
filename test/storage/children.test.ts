// Store conformance, child runs: a run's parent is stored with it, its children are listed, and a child's
// end wakes a parent suspended on it in the same commit (whichever of the two commits first).
// Every test runs against SQLite and PostgreSQL alike.

import { describe, expect, it } from "vitest";
import { BACKENDS, batch } from "./backends.js";
import { createRun, suspend, T0 } from "./fixtures.js";

describe.each(BACKENDS)("$name store: child runs", (backend) => {
  it("stores the parent with a child and lists a run's children, oldest first", async () => {
    const store = await (await backend.fresh()).open();
    const parent = await createRun(store, "p");
    const a = await createRun(store, "a", { workflow: "child", parentRunId: parent.id });
    const b = await createRun(store, "b", { workflow: "child", parentRunId: parent.id });
    await createRun(store, "c", { workflow: "child" });
    expect(a.parentRunId).toBe(parent.id);
    expect(parent.parentRunId).toBeNull();
    expect((await store.childRuns(parent.id)).map((r) => r.key)).toEqual(["a", "b"]);
    expect(await store.childRuns(a.id)).toEqual([]);
    expect((await store.getRun(b.id))!.parentRunId).toBe(parent.id);
  });

  it("a child's end wakes its parent suspended on it, not one suspended on another child or owned", async () => {
    const store = await (await backend.fresh()).open();
    const parent = await createRun(store, "p", { owner: "me" });
    const other = await createRun(store, "q", { owner: "me" });
    const child = await createRun(store, "c", { workflow: "child", parentRunId: parent.id, owner: "me" });
    const sibling = await createRun(store, "s", { workflow: "child", parentRunId: other.id, owner: "me" });
    await suspend(store, parent, "me", T0 + 1, { waitRuns: `|${child.id}|` });
    await suspend(store, other, "me", T0 + 1, { waitRuns: `|${sibling.id + 1000}|` });
    expect((await store.getRun(parent.id))!).toMatchObject({ waitRuns: `|${child.id}|`, wakeAt: null });
    await store.commit(
      batch(T0 + 5, {
        runs: [
          { id: child.id, status: "completed", output: "1", owner: null, leaseUntil: null, wakeAt: null },
        ],
        leases: [{ runId: child.id, owner: "me" }],
      }),
    );
    expect((await store.getRun(parent.id))!.wakeAt).toBe(T0 + 5);
    await store.commit(batch(T0 + 6, { runs: [{ id: sibling.id, status: "failed", owner: null }] }));
    expect((await store.getRun(other.id))!.wakeAt).toBeNull();
    // A claim clears what the run waited on.
    const [claimed] = await store.claimDue(T0 + 10, "me", T0 + 100, 10, null);
    expect(claimed).toMatchObject({ id: parent.id, waitRuns: null });
  });

  it("a suspension on a child that already ended wakes at once", async () => {
    const store = await (await backend.fresh()).open();
    const parent = await createRun(store, "p", { owner: "me" });
    const child = await createRun(store, "c", { workflow: "child", parentRunId: parent.id });
    await store.commit(batch(T0 + 2, { runs: [{ id: child.id, status: "completed", wakeAt: null }] }));
    await suspend(store, parent, "me", T0 + 3, { waitRuns: `|${child.id}|` });
    expect((await store.getRun(parent.id))!.wakeAt).toBe(T0 + 3);
  });

  it("cancelRun wakes the parent suspended on the cancelled child and clears the child's waits", async () => {
    const store = await (await backend.fresh()).open();
    const parent = await createRun(store, "p", { owner: "me" });
    const child = await createRun(store, "c", { workflow: "child", parentRunId: parent.id, owner: "me" });
    await suspend(store, child, "me", T0 + 1, { waitRuns: "|999|" });
    await suspend(store, parent, "me", T0 + 1, { waitRuns: `|${child.id}|` });
    expect(await store.cancelRun(child.id, T0 + 7, "me", '{"message":"by parent"}')).toBe(true);
    expect((await store.getRun(parent.id))!.wakeAt).toBe(T0 + 7);
    expect((await store.getRun(child.id))!).toMatchObject({ status: "cancelled", waitRuns: null });
  });
});
