// Store conformance, failure signatures: each failing run's stored signature, grouped by the store (what
// fails most, complete at any scale), runs selected by it, and the migration that backfills it.
// Every test runs against SQLite and PostgreSQL alike.

import { describe, expect, it } from "vitest";
import { signatureOf } from "../../src/failure-signature.js";
import { BACKENDS, batch } from "./backends.js";
import { createRun, entry, T0 } from "./fixtures.js";

const stepFailed = (step: string, name: string, message: string) =>
  JSON.stringify({
    name: "StepFailedError",
    message: `Step "${step}" failed: ${message}`,
    code: "STEP_FAILED",
    details: { step, cause: { name, message } },
  });

describe.each(BACKENDS)("$name store: failure signatures", (backend) => {
  it("groups failed and retrying runs by signature: most runs first, in a window, by workflow or signature", async () => {
    const store = await (await backend.fresh()).open();
    const patch = (
      id: number,
      status: "failed" | "retrying" | "completed",
      sig: string | null,
      at: number,
    ) => ({
      id,
      status,
      failureSignature: sig,
      updatedAt: at,
      finishedAt: status === "retrying" ? null : at,
    });
    const runs = [];
    for (let i = 0; i < 7; i++)
      runs.push(await createRun(store, `r-${i}`, { workflow: i < 6 ? "invoice" : "report" }));
    await store.commit(
      batch(T0, {
        runs: [
          patch(runs[0]!.id, "failed", "aaaaaaaaaaaa", T0 + 10),
          patch(runs[1]!.id, "failed", "aaaaaaaaaaaa", T0 + 30),
          patch(runs[2]!.id, "retrying", "aaaaaaaaaaaa", T0 + 20),
          patch(runs[3]!.id, "failed", "bbbbbbbbbbbb", T0 + 40),
          patch(runs[4]!.id, "failed", "cccccccccccc", T0 - 1000), // before the window
          patch(runs[5]!.id, "completed", "aaaaaaaaaaaa", T0 + 50), // not failing: never counted
          patch(runs[6]!.id, "failed", "dddddddddddd", T0 + 5),
        ],
      }),
    );
    const all = await store.failureGroups({ since: T0, limit: 10 });
    expect(all.total).toBe(5);
    expect(all.groups).toEqual([
      {
        signature: "aaaaaaaaaaaa",
        workflow: "invoice",
        count: 3,
        retrying: 1,
        firstAt: T0 + 10,
        lastAt: T0 + 30,
      },
      {
        signature: "bbbbbbbbbbbb",
        workflow: "invoice",
        count: 1,
        retrying: 0,
        firstAt: T0 + 40,
        lastAt: T0 + 40,
      },
      {
        signature: "dddddddddddd",
        workflow: "report",
        count: 1,
        retrying: 0,
        firstAt: T0 + 5,
        lastAt: T0 + 5,
      },
    ]);
    expect((await store.failureGroups({ since: T0, limit: 1 })).groups.map((g) => g.signature)).toEqual([
      "aaaaaaaaaaaa",
    ]);
    expect((await store.failureGroups({ since: T0 - 5000, limit: 10 })).total).toBe(6);
    expect((await store.failureGroups({ since: T0, limit: 10, workflow: "report" })).groups).toHaveLength(1);
    const one = await store.failureGroups({ since: T0, limit: 10, signature: "bbbbbbbbbbbb" });
    expect(one).toEqual({ total: 1, groups: [expect.objectContaining({ signature: "bbbbbbbbbbbb" })] });

    // Runs selected by signature: only those failing (or retrying) with it, newest first.
    const keys = (await store.listRuns({ failureSignature: "aaaaaaaaaaaa", limit: 10 })).map((r) => r.key);
    expect(keys).toEqual(["r-2", "r-1", "r-0"]);
    expect((await store.getRun(runs[3]!.id))!.failureSignature).toBe("bbbbbbbbbbbb");
    expect((await store.getRun(runs[5]!.id))!.failureSignature).toBe("aaaaaaaaaaaa");
    expect((await store.listRuns({ version: 2, limit: 10 })).length).toBe(0);
    expect((await store.listRuns({ version: 1, limit: 10 })).length).toBe(7);
  });

  it("an upgrade stores the signature of every failed and retrying run an older Waymark left", async () => {
    const fresh = await backend.fresh();
    const run = (id: number, key: string, status: string, error: string | null, waiting: string | null) => ({
      id,
      workflow: "invoice",
      key,
      version: 1,
      status,
      input: null,
      initial_state: "{}",
      state: "{}",
      error,
      waiting,
      created_at: T0,
      updated_at: T0 + 1,
      finished_at: status === "failed" ? T0 + 1 : null,
    });
    const row = (runId: number, seq: number, over: Parameters<typeof entry>[2]) => {
      const e = entry(runId, seq, over);
      return {
        run_id: e.runId,
        seq: e.seq,
        scope: e.scope,
        ordinal: e.ordinal,
        name: e.name,
        kind: e.kind,
        status: e.status,
        error: e.error,
        attempts: e.attempts,
      };
    };
    const codeError = JSON.stringify({
      name: "TypeError",
      message: "Cannot read properties of null (reading 'email')",
    });
    const attempts = JSON.stringify([
      {
        n: 1,
        startedAt: T0,
        endedAt: T0,
        status: "failed",
        error: { name: "TaxApiError", message: "Tax API 503 for order 7" },
      },
    ]);
    await fresh.atVersion(1, {
      runs: [
        run(1, "a", "failed", stepFailed("charge", "TaxApiError", "Tax API 503 for order 42"), null),
        run(2, "b", "failed", codeError, null),
        run(
          3,
          "c",
          "retrying",
          null,
          JSON.stringify([{ kind: "retry", entry: "charge", until: T0 + 60_000 }]),
        ),
        run(4, "d", "completed", null, null),
      ],
      entries: [
        row(2, 1, { name: "load" }),
        row(3, 1, { name: "charge", status: "retrying", attempts, output: null }),
      ],
    });
    const store = await fresh.open();
    const byKey = new Map((await store.listRuns({ limit: 10 })).map((r) => [r.key, r.failureSignature]));
    expect(byKey.get("a")).toBe(
      signatureOf({
        workflow: "invoice",
        entry: "charge",
        errorName: "TaxApiError",
        message: "Tax API 503 for order 99",
      }),
    );
    expect(byKey.get("b")).toBe(
      signatureOf({
        workflow: "invoice",
        entry: "(workflow code)",
        errorName: "TypeError",
        message: "Cannot read properties of null (reading 'email')",
      }),
    );
    expect(byKey.get("c")).toBe(byKey.get("a")); // the same error, still retrying
    expect(byKey.get("d")).toBeNull();
    const groups = await store.failureGroups({ since: T0, limit: 10 });
    expect(groups.groups.map((g) => [g.count, g.retrying])).toEqual([
      [2, 1],
      [1, 0],
    ]);
  });
});
