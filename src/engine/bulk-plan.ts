// A bulk action worked out from rows alone: which runs it takes, which it refuses or skips and why, and the
// signatures among them. Pure: no store, no engine, so every rule is testable on plain rows.
//
// - replay takes failed and cancelled runs (it retries the failed step, or the cancelled entry); any other
//   status is refused, except a run that changed after the plan was made (replayed already, by this plan
//   before a crash or by someone else): that one is skipped;
// - cancel takes unfinished runs; an already cancelled run is skipped, a completed or failed one refused.

import { InvalidInputError } from "../errors.js";
import { type PlanAction, RUN_STATUSES, type RunRow, type RunStatus } from "../storage/store.js";
import type { BulkSelector, BulkSignatureCount } from "./bulk-types.js";
import { checkTags } from "./tags.js";

/** What a bulk action does with one run. */
export type Verdict = { act: true } | { act: false; outcome: "refused" | "skipped"; reason: string };

/** Most runs one plan pins. */
export const MAX_PLAN_RUNS = 10_000;
/** How long a plan that has not started is accepted (ms of the engine's clock). */
export const PLAN_TTL_MS = 15 * 60_000;

/** What `action` does with `run` now; `planAt` is when the plan was made (absent while previewing). */
export function judge(action: PlanAction, run: RunRow, planAt?: number): Verdict {
  const changed = planAt !== undefined && run.updatedAt > planAt;
  if (action === "replay") {
    if (run.status === "failed" || run.status === "cancelled") return { act: true };
    if (changed)
      return {
        act: false,
        outcome: "skipped",
        reason: `it changed after the plan was made (it is ${run.status} now, so it was replayed or restarted already)`,
      };
    if (run.status === "retrying")
      return {
        act: false,
        outcome: "refused",
        reason:
          "it is still retrying its failing step; wait until it fails, or cancel it (cancel_runs) and replay it then",
      };
    if (run.status === "completed")
      return {
        act: false,
        outcome: "refused",
        reason:
          "it completed; a bulk replay only retries failed or cancelled runs (replay_run with fromStep reruns one)",
      };
    return {
      act: false,
      outcome: "refused",
      reason: `it is ${run.status}, not failed: there is nothing to retry`,
    };
  }
  if (run.status === "cancelled")
    return { act: false, outcome: "skipped", reason: "it is already cancelled" };
  if (run.status === "completed" || run.status === "failed")
    return { act: false, outcome: "refused", reason: `it already ${run.status}: there is nothing to cancel` };
  return { act: true };
}

/** The selected runs counted by signature (and workflow), most runs first; `eligible` counts those taken. */
export function bySignature(
  rows: readonly RunRow[],
  eligible: ReadonlySet<number>,
): Omit<BulkSignatureCount, "pattern">[] {
  const groups = new Map<string, Omit<BulkSignatureCount, "pattern">>();
  for (const r of rows) {
    const id = `${r.workflow}\n${r.failureSignature ?? ""}`;
    const g = groups.get(id) ?? {
      signature: r.failureSignature,
      workflow: r.workflow,
      count: 0,
      eligible: 0,
    };
    g.count++;
    if (eligible.has(r.id)) g.eligible++;
    groups.set(id, g);
  }
  return [...groups.values()].sort((a, b) => b.count - a.count);
}

/**
 * Refuses a selector that selects nothing in particular or mixes its fields wrongly; answers it with its tags
 * checked (INVALID_TAG / TAG_LIMIT_EXCEEDED) and left out when there are none (`tags: {}` selects nothing).
 */
export function checkSelector(input: BulkSelector): BulkSelector {
  const selector = { ...input };
  if (selector.tags !== undefined) {
    const tags = checkTags(selector.tags, "selector tags", true);
    if (Object.keys(tags).length) selector.tags = tags;
    else delete selector.tags;
  }
  const given = Object.entries(selector).filter(([, v]) => v !== undefined);
  if (given.length === 0)
    throw new InvalidInputError(
      "A bulk action needs a selector: a failure signature (see list_failures), a workflow, a status, tags, explicit keys or a time window. Nothing selects every run.",
    );
  if (selector.keys !== undefined && selector.workflow === undefined)
    throw new InvalidInputError("keys name runs of one workflow: pass workflow with them.");
  if (selector.keys !== undefined && (selector.keys.length === 0 || selector.keys.length > 1000))
    throw new InvalidInputError(`keys takes 1 to 1,000 run keys; got ${selector.keys.length}.`);
  for (const s of selector.status ?? [])
    if (!RUN_STATUSES.includes(s as RunStatus))
      throw new InvalidInputError(
        `Unknown run status ${JSON.stringify(s)}; statuses are: ${RUN_STATUSES.join(", ")}.`,
      );
  return selector;
}

/**
 * True when a run matches the fields of a selector other than its keys (for runs found by key); `tags` are
 * the run's tags (needed when the selector has tags).
 */
export function matches(selector: BulkSelector, run: RunRow, tags: Record<string, string> = {}): boolean {
  return (
    Object.entries(selector.tags ?? {}).every(([name, value]) => tags[name] === value) &&
    (selector.workflow === undefined || run.workflow === selector.workflow) &&
    (selector.status === undefined || selector.status.includes(run.status)) &&
    (selector.signature === undefined || run.failureSignature === selector.signature) &&
    (selector.createdAfter === undefined || run.createdAt >= selector.createdAfter) &&
    (selector.createdBefore === undefined || run.createdAt < selector.createdBefore)
  );
}
