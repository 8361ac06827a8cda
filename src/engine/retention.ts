// Retention: how long finished runs are kept, per status, set on a workflow (`workflow({ retention })`) and
// engine-wide (`registry.start({ retention })`); the workflow's setting wins per status. Default: keep everything.
// Pure: settings checked here, turned into the store's rules at a given time.

import type { PrunedCount, RetentionRule } from "../storage/store.js";
import type { Duration } from "../workflow.js";
import { toMs } from "./duration.js";

/** The statuses retention applies to: a run's end. */
export const RETENTION_STATUSES = ["completed", "failed", "cancelled"] as const;
export type RetentionStatus = (typeof RETENTION_STATUSES)[number];

/**
 * How long finished runs are kept after they finished, per status: a duration ("30d", "12h", ms), or null
 * to keep them (a workflow's null overrides an engine-wide duration). A status left out is kept, or takes
 * the engine-wide setting.
 */
export type Retention = Partial<Record<RetentionStatus, Duration | null>>;

/** A checked retention: milliseconds, or null (keep), per status given. */
export type RetentionMs = Partial<Record<RetentionStatus, number | null>>;

/** Checks a retention setting; returns it in milliseconds, or what is wrong with it (naming `what`). */
export function parseRetention(value: unknown, what: string): RetentionMs | { problem: string } {
  const example = '{ completed: "30d", failed: "90d", cancelled: "30d" }';
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { problem: `${what} takes an object of durations by status, e.g. ${example}` };
  }
  const out: RetentionMs = {};
  for (const [status, duration] of Object.entries(value)) {
    if (!(RETENTION_STATUSES as readonly string[]).includes(status)) {
      return {
        problem: `${what} has "${status}", which is not a status runs end with; use completed, failed or cancelled, e.g. ${example}`,
      };
    }
    if (duration === undefined) continue;
    if (duration === null) {
      out[status as RetentionStatus] = null;
      continue;
    }
    try {
      out[status as RetentionStatus] = toMs(duration as Duration, `${what}.${status}`);
    } catch (err) {
      return { problem: `${(err as Error).message} (null keeps ${status} runs)` };
    }
  }
  return out;
}

/** The retention of each workflow: its own setting per status, else the engine-wide one (null: keep). */
export function effectiveRetention(
  workflows: Iterable<[name: string, own: RetentionMs | undefined]>,
  engineWide: RetentionMs | undefined,
): Map<string, Record<RetentionStatus, number | null>> {
  const out = new Map<string, Record<RetentionStatus, number | null>>();
  for (const [name, own] of workflows) {
    const pick = (s: RetentionStatus) =>
      own && s in own ? (own[s] ?? null) : engineWide && s in engineWide ? (engineWide[s] ?? null) : null;
    out.set(name, { completed: pick("completed"), failed: pick("failed"), cancelled: pick("cancelled") });
  }
  return out;
}

/** The store's rules at `now`: a run is expired once it finished longer ago than its retention. */
export function retentionRules(
  retention: Map<string, Record<RetentionStatus, number | null>>,
  now: number,
): RetentionRule[] {
  const rules: RetentionRule[] = [];
  for (const [workflow, byStatus] of retention) {
    for (const status of RETENTION_STATUSES) {
      const ms = byStatus[status];
      if (ms !== null) rules.push({ workflow, status, finishedBefore: now - ms });
    }
  }
  return rules;
}

/** What pruneOlderThan takes: the age, the statuses (default all three), and whether to only count. */
export interface PruneOptions {
  /** Finished runs that finished longer ago than this: "30d", "12h", or ms. */
  olderThan: string | number;
  /** Only runs that ended with these statuses (default completed, failed and cancelled). */
  status?: RetentionStatus[];
  /** Only runs of these workflows (default every workflow in the database). */
  workflows?: string[];
  /** Count what would be deleted, delete nothing. */
  dryRun?: boolean;
}

/** What pruneOlderThan did (or would do, dry run): runs by workflow and status, and their total. */
export interface PruneResult {
  dryRun: boolean;
  total: number;
  runs: PrunedCount[];
}
