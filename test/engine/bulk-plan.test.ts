// The rules of a bulk action on plain rows: which runs it takes, which it refuses or skips and why.

import { describe, expect, it } from "vitest";
import { bySignature, checkSelector, judge, matches } from "../../src/engine/bulk-plan.js";
import { runRow } from "./rows.js";

describe("bulk plan rules", () => {
  it("replay takes failed and cancelled runs; refuses the rest, but skips a run changed since the plan", () => {
    expect(judge("replay", runRow({ status: "failed" }))).toEqual({ act: true });
    expect(judge("replay", runRow({ status: "cancelled" }))).toEqual({ act: true });
    expect(judge("replay", runRow({ status: "retrying" }))).toMatchObject({
      act: false,
      outcome: "refused",
      reason: expect.stringContaining("still retrying"),
    });
    expect(judge("replay", runRow({ status: "completed", updatedAt: 5 }), 10)).toMatchObject({
      outcome: "refused",
    });
    // Replayed already (by this plan before a crash, or by someone else): nothing to do.
    expect(judge("replay", runRow({ status: "completed", updatedAt: 11 }), 10)).toMatchObject({
      outcome: "skipped",
      reason: expect.stringContaining("changed after the plan was made (it is completed now"),
    });
    expect(judge("replay", runRow({ status: "failed", updatedAt: 11 }), 10)).toEqual({ act: true });
  });

  it("cancel takes unfinished runs, skips cancelled ones and refuses finished ones", () => {
    for (const status of ["pending", "running", "sleeping", "waiting", "retrying"] as const)
      expect(judge("cancel", runRow({ status }))).toEqual({ act: true });
    expect(judge("cancel", runRow({ status: "cancelled" }))).toMatchObject({ outcome: "skipped" });
    expect(judge("cancel", runRow({ status: "failed" }))).toMatchObject({
      outcome: "refused",
      reason: "it already failed: there is nothing to cancel",
    });
  });

  it("counts runs by signature and workflow, most first", () => {
    const rows = [
      runRow({ id: 1, failureSignature: "a" }),
      runRow({ id: 2, failureSignature: "b" }),
      runRow({ id: 3, failureSignature: "b" }),
      runRow({ id: 4, failureSignature: "b", workflow: "other" }),
      runRow({ id: 5, status: "waiting" }),
    ];
    expect(bySignature(rows, new Set([2, 4]))).toEqual([
      { signature: "b", workflow: "wf", count: 2, eligible: 1 },
      { signature: "a", workflow: "wf", count: 1, eligible: 0 },
      { signature: "b", workflow: "other", count: 1, eligible: 1 },
      { signature: null, workflow: "wf", count: 1, eligible: 0 },
    ]);
  });

  it("refuses an empty selector, keys without a workflow and unknown statuses; matches the rest field by field", () => {
    expect(() => checkSelector({})).toThrow(/needs a selector/);
    expect(() => checkSelector({ keys: ["a"] })).toThrow(/pass workflow with them/);
    expect(() => checkSelector({ status: ["broken" as never] })).toThrow(/Unknown run status "broken"/);
    expect(() => checkSelector({ workflow: "wf", keys: ["a"] })).not.toThrow();
    const run = runRow({ createdAt: 100, failureSignature: "s" });
    expect(
      matches(
        { workflow: "wf", status: ["failed"], signature: "s", createdAfter: 100, createdBefore: 101 },
        run,
      ),
    ).toBe(true);
    expect(matches({ createdBefore: 100 }, run)).toBe(false);
    expect(matches({ signature: "t" }, run)).toBe(false);
  });
});
