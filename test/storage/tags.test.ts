// Store conformance, tags: stored with a run at creation, set by a batch (step.tag), read back by run,
// and filtering run listings and failure groups (exact values, several ANDed) with a correct keyset cursor.
// Every test runs against SQLite and PostgreSQL alike.

import { describe, expect, it } from "vitest";
import type { RunQuery, RunRow, Store } from "../../src/storage/store.js";
import { BACKENDS, batch } from "./backends.js";
import { createRun, T0 } from "./fixtures.js";

async function createTagged(
  store: Store,
  key: string,
  tags: Record<string, string>,
  now = T0,
  workflow = "wf",
): Promise<{ run: RunRow; created: boolean }> {
  const res = await store.commit(
    batch(now, {
      creates: [
        {
          workflow,
          key,
          version: 1,
          input: null,
          initialState: "{}",
          now,
          owner: null,
          leaseUntil: null,
          tags,
        },
      ],
    }),
  );
  return res.created[0]!;
}

describe.each(BACKENDS)("$name store: tags", (backend) => {
  it("stores tags with a created run, keeps them when the run already exists, and sets more by batch", async () => {
    const store = await (await backend.fresh()).open();
    const { run } = await createTagged(store, "a", { customer: "c-9", region: "eu" });
    const again = await createTagged(store, "a", { customer: "c-1", plan: "x" });
    expect(again.created).toBe(false);
    expect(await store.runTags([run.id])).toEqual([
      { runId: run.id, name: "customer", value: "c-9" },
      { runId: run.id, name: "region", value: "eu" },
    ]);
    const other = await createRun(store, "b");
    await store.commit(
      batch(T0 + 1, {
        tags: [
          { runId: run.id, name: "tier", value: "gold" },
          { runId: run.id, name: "region", value: "us" },
          { runId: other.id, name: "tier", value: "silver" },
        ],
      }),
    );
    expect(await store.runTags([run.id, other.id, 999_999])).toEqual([
      { runId: run.id, name: "customer", value: "c-9" },
      { runId: run.id, name: "region", value: "us" },
      { runId: run.id, name: "tier", value: "gold" },
      { runId: other.id, name: "tier", value: "silver" },
    ]);
    expect(await store.runTags([])).toEqual([]);
    // A tag set by a batch finds the run like a tag given at creation.
    const keys = async (q: Omit<RunQuery, "limit">) =>
      (await store.listRuns({ ...q, limit: 10 })).map((r) => r.key);
    expect(await keys({ tags: { tier: "gold" } })).toEqual(["a"]);
    expect(await keys({ tags: { region: "eu" } })).toEqual([]);
  });

  it("a pruned run's tags are deleted with it; a kept run keeps its own", async () => {
    const store = await (await backend.fresh()).open();
    const { run: old } = await createTagged(store, "old", { customer: "c-9" });
    const { run: kept } = await createTagged(store, "kept", { customer: "c-9" }, T0 + 1000);
    for (const [r, at] of [
      [old, T0 + 10],
      [kept, T0 + 2000],
    ] as const) {
      await store.commit(
        batch(at, { runs: [{ id: r.id, status: "completed", finishedAt: at, updatedAt: at }] }),
      );
    }
    const pruned = await store.pruneRuns(
      [{ workflow: "wf", status: "completed", finishedBefore: T0 + 500 }],
      10,
    );
    expect(pruned).toEqual([{ workflow: "wf", status: "completed", count: 1 }]);
    expect(await store.runTags([old.id, kept.id])).toEqual([
      { runId: kept.id, name: "customer", value: "c-9" },
    ]);
    expect((await store.listRuns({ tags: { customer: "c-9" }, limit: 10 })).map((r) => r.key)).toEqual([
      "kept",
    ]);
  });

  it("a batch whose other write fails stores none of its tags", async () => {
    const store = await (await backend.fresh()).open();
    const run = await createRun(store, "a", { owner: "p1" });
    await expect(
      store.commit(
        batch(T0 + 1, {
          tags: [{ runId: run.id, name: "tier", value: "gold" }],
          leases: [{ runId: run.id, owner: "p2" }],
        }),
      ),
    ).rejects.toMatchObject({ code: "LEASE_LOST" });
    expect(await store.runTags([run.id])).toEqual([]);
  });

  it("filters runs by tags (exact values, ANDed) with the other filters, newest first, and pages with the cursor", async () => {
    const store = await (await backend.fresh()).open();
    // 30 runs, three per time so that the cursor's id tie-break counts; customers alternate, regions by thirds.
    for (let i = 0; i < 30; i++) {
      await createTagged(
        store,
        `k${i}`,
        { customer: i % 2 ? "c-9" : "c-1", region: ["eu", "us", "ap"][i % 3]! },
        T0 + Math.floor(i / 3),
        i % 5 === 0 ? "other" : "wf",
      );
    }
    await createRun(store, "untagged", { now: T0 + 100 });
    const failed = await store.findRun("wf", "k9");
    await store.commit(batch(T0 + 50, { runs: [{ id: failed!.id, status: "failed" }] }));

    const expected = (pred: (i: number) => boolean) =>
      Array.from({ length: 30 }, (_, i) => i)
        .filter(pred)
        .reverse()
        .map((i) => `k${i}`);
    const page = async (q: Omit<RunQuery, "limit">, limit: number) => {
      const out: string[] = [];
      let before: RunQuery["before"];
      for (;;) {
        const rows = await store.listRuns({ ...q, limit, ...(before ? { before } : {}) });
        out.push(...rows.map((r) => r.key));
        if (rows.length < limit) return out;
        const last = rows.at(-1)!;
        before = { createdAt: last.createdAt, id: last.id };
      }
    };
    expect(await page({ tags: { customer: "c-9" } }, 100)).toEqual(expected((i) => i % 2 === 1));
    expect(await page({ tags: { customer: "c-9" } }, 4)).toEqual(expected((i) => i % 2 === 1));
    expect(await page({ tags: { customer: "c-9", region: "eu" } }, 2)).toEqual(
      expected((i) => i % 2 === 1 && i % 3 === 0),
    );
    expect(await page({ tags: { customer: "c-9", region: "eu", plan: "x" } }, 2)).toEqual([]);
    expect(await page({ tags: { customer: "c-" } }, 5)).toEqual([]);
    expect(await page({ tags: { customer: "c-1" }, workflow: "other" }, 1)).toEqual(
      expected((i) => i % 2 === 0 && i % 5 === 0),
    );
    expect(await page({ tags: { customer: "c-9" }, status: ["failed"] }, 3)).toEqual(["k9"]);
    expect(await page({ tags: { region: "us" }, createdAfter: T0 + 3, createdBefore: T0 + 8 }, 2)).toEqual(
      expected((i) => i % 3 === 1 && i >= 9 && i < 24),
    );
    expect(await page({ tags: { region: "ap" }, keyContains: "2" }, 2)).toEqual(
      expected((i) => i % 3 === 2 && String(i).includes("2")),
    );
  });

  it("narrows failure groups by tags", async () => {
    const store = await (await backend.fresh()).open();
    const runs: RunRow[] = [];
    for (let i = 0; i < 6; i++) {
      runs.push((await createTagged(store, `k${i}`, { customer: i < 4 ? "c-9" : "c-1" }, T0 + i)).run);
    }
    await store.commit(
      batch(T0 + 10, {
        runs: runs.map((r, i) => ({
          id: r.id,
          status: "failed" as const,
          finishedAt: T0 + 10,
          failureSignature: i % 2 ? "sig-a" : "sig-b",
        })),
        tags: [{ runId: runs[0]!.id, name: "tier", value: "gold" }],
      }),
    );
    const all = await store.failureGroups({ since: T0, limit: 10 });
    expect(all.total).toBe(6);
    const c9 = await store.failureGroups({ since: T0, limit: 10, tags: { customer: "c-9" } });
    expect(c9.total).toBe(4);
    expect(c9.groups.map((g) => [g.signature, g.count]).sort()).toEqual([
      ["sig-a", 2],
      ["sig-b", 2],
    ]);
    const gold = await store.failureGroups({ since: T0, limit: 10, tags: { customer: "c-9", tier: "gold" } });
    expect(gold.total).toBe(1);
    expect(gold.groups.map((g) => g.signature)).toEqual(["sig-b"]);
  });
});
