// What engine.bulk answers (a bulk action's selector, its dry run and plan, what a real call did), apart from
// the machinery so the public interface names them without importing it.

import type { PlanAction, RunStatus } from "../storage/store.js";
import type { AuditWrite } from "./audit-types.js";

export type { PlanAction } from "../storage/store.js";

/**
 * Which runs a bulk action takes: every field given must hold (an AND). At least one field is required:
 * nothing selects every run by accident.
 */
export interface BulkSelector {
  workflow?: string;
  status?: RunStatus[];
  /** A failure signature as list_failures reports it (failed and retrying runs only). */
  signature?: string;
  /** Explicit run keys (with `workflow`). */
  keys?: string[];
  /** Runs created at or after this time (ms). */
  createdAfter?: number;
  /** Runs created before this time (ms). */
  createdBefore?: number;
  /** Runs holding every one of these tags with exactly these values (ANDed), read from the tag index. */
  tags?: Record<string, string>;
}

/** How a bulk action is asked for. */
export interface BulkRequest {
  action: PlanAction;
  selector: BulkSelector;
  /** Replay only: the version runs go on with (default the latest registered). */
  version?: number;
}

/** One signature among the selected runs. */
export interface BulkSignatureCount {
  /** null: runs without a stored signature (not failed or retrying). */
  signature: string | null;
  workflow: string;
  /** The normalised message of the signature ("" when unknown). */
  pattern: string;
  count: number;
  /** How many of them the action would take (the rest are refused). */
  eligible: number;
}

/** A run the action would refuse or skip, and why. */
export interface BulkRefusal {
  run: string;
  status: RunStatus;
  reason: string;
}

/** One sample of a dry run: what acting on this run would do (a replay's plan in short), or why it cannot. */
export interface BulkSample {
  run: string;
  status: RunStatus;
  /** Replay: the entry it starts from, what it discards and runs again, the version it goes on with. */
  replay?: {
    from: string | null;
    discard: string[];
    discardCount: number;
    rerun: string[];
    version: { from: number; to: number };
    checkedAgainstCode: boolean;
  };
  /** Why the dry run of this run was refused (it will be refused at the real call too). */
  refused?: string;
}

/** A dry run: what a real call with `token` would act on. The plan pins exactly these runs. */
export interface BulkPreview {
  action: PlanAction;
  token: string;
  /** When the plan stops being accepted unless it has started (ms). */
  expiresAt: number;
  /** Runs the selector matched: the plan pins all of them, in this order. */
  matched: number;
  /** How many the action would take now. */
  eligible: number;
  bySignature: BulkSignatureCount[];
  /** Up to ten eligible runs dry-run one by one. */
  samples: BulkSample[];
  /** The runs that would be refused or skipped (the first 50), and their count. */
  refused: BulkRefusal[];
  refusedCount: number;
}

/** A plan as stored, with its progress. */
export interface BulkPlanInfo {
  action: PlanAction;
  token: string;
  request: BulkRequest;
  createdAt: number;
  expiresAt: number;
  total: number;
  /** Runs acted on so far by outcome, and those pending. */
  progress: BulkCounts & { pending: number };
}

/** Runs by what became of them. */
export interface BulkCounts {
  /** Replayed (or cancelled) here. */
  done: number;
  /** Stored for the process that runs the workflow (it has not carried it out yet). */
  requested: number;
  refused: number;
  /** Already done or changed since the plan: nothing to do. */
  skipped: number;
}

/** What one real call did. */
export interface BulkResult {
  action: PlanAction;
  token: string;
  total: number;
  /** What this call did (a run acted on by an earlier call counts as skipped here). */
  counts: BulkCounts;
  /** The refusals and skips of this call (the first 50), each with its reason. */
  refusals: BulkRefusal[];
  /** The plan's progress over every call so far. */
  progress: BulkCounts & { pending: number };
  /** True when no run of the plan is pending. */
  finished: boolean;
}

/** Progress of a real call, after each batch. */
export interface BulkProgress {
  processed: number;
  total: number;
  message: string;
}

/** engine.bulk: replay or cancel many runs, dry run first, then a real call on the pinned plan. */
export interface BulkControl {
  /** Selects the runs, pins them in a plan (expiring after 15 minutes of the clock) and says what acting would do. */
  preview(request: BulkRequest): Promise<BulkPreview>;
  /** A stored plan and its progress; PLAN_NOT_FOUND when there is none. */
  plan(token: string): Promise<BulkPlanInfo>;
  /**
   * Acts on the plan's pending runs in batches, storing each batch's outcomes, so a second call after a
   * crash carries on where the first stopped and a finished plan does nothing more.
   */
  apply(
    token: string,
    options?: {
      action?: PlanAction;
      batchSize?: number;
      by?: string;
      onProgress?: (p: BulkProgress) => Promise<void> | void;
      signal?: AbortSignal;
      /** Who asks: each run acted on (or refused) is recorded in the audit against that run, as this write. */
      audit?: Omit<AuditWrite, "run" | "args">;
    },
  ): Promise<BulkResult>;
}
