// Concurrency limits: `workflow({ concurrency: { limit, key } })` lets at most `limit` runs with the same key
// value (or of the whole workflow, without `key`) execute at once, across every process on the database.
//
// IMPORTANT: a run holds a slot while its status is `running` or `retrying` (a retry's backoff included);
// sleeping, waiting (queue, message, child) and pending runs hold none. The store enforces the limit when
// it claims a run (claimDue): the count and the claim are one atomic step there, so two processes never
// start one run too many. The engine's part is here: the key's value, worked out once at creation.

import { ConcurrencyKeyError } from "../errors.js";
import {
  type ConcurrencyQueue,
  type RunRow,
  type RunStatus,
  SLOT_STATUSES,
  TERMINAL_STATUSES,
} from "../storage/store.js";
import { describe, textProblem } from "./query-input.js";

/** What `workflow({ concurrency })` takes. */
export interface ConcurrencyOptions<I = any> {
  /** How many runs (per key value) may execute at once: a whole number from 1. */
  limit: number;
  /** The run's key value from its input (e.g. `(input) => input.customerId`); without it, one limit per workflow. */
  key?: (input: I) => string;
  /** What a key value is, for people ("customer" reads "queued behind 2 runs of customer c-9"). Default "key". */
  label?: string;
}

/** The limit and key value recorded on a run of a limited workflow. */
export interface RunConcurrency {
  key: string;
  limit: number;
}

/** Checks `workflow({ concurrency })` (a TypeError that says what is wrong), or undefined when there is none. */
export function checkConcurrency<I>(c: ConcurrencyOptions<I> | undefined): ConcurrencyOptions<I> | undefined {
  if (c === undefined) return undefined;
  if (typeof c !== "object" || c === null) {
    throw new TypeError(
      "workflow({ concurrency }) takes an object, e.g. { limit: 2, key: (input) => input.customerId }.",
    );
  }
  if (!Number.isInteger(c.limit) || c.limit < 1 || c.limit > 1_000_000) {
    throw new TypeError(
      `workflow({ concurrency: { limit } }) must be a whole number from 1 to 1,000,000; got ${describe(c.limit)}.`,
    );
  }
  if (c.key !== undefined && typeof c.key !== "function") {
    throw new TypeError(
      `workflow({ concurrency: { key } }) must be a function of the run's input returning a string, e.g. (input) => input.customerId; got ${typeof c.key}.`,
    );
  }
  if (c.label !== undefined && (typeof c.label !== "string" || c.label.length === 0 || c.label.length > 40)) {
    throw new TypeError(
      `workflow({ concurrency: { label } }) names what a key is in 1 to 40 characters (e.g. "customer"); got ${JSON.stringify(c.label)}.`,
    );
  }
  return Object.freeze({ ...c });
}

/**
 * The concurrency a new run of this workflow gets: its key's value from the input (the empty string for a
 * per-workflow limit), or null for a workflow without a limit. Refuses (ConcurrencyKeyError) a key
 * function that throws or returns anything but a non-empty string of at most 512 characters.
 */
export function runConcurrency(
  c: ConcurrencyOptions | undefined,
  run: string,
  input: unknown,
): RunConcurrency | null {
  if (!c) return null;
  if (!c.key) return { key: "", limit: c.limit };
  let value: unknown;
  try {
    value = c.key(input);
  } catch (err) {
    throw new ConcurrencyKeyError(
      run,
      `function threw for this input: ${err instanceof Error ? err.message : String(err)}`,
      err,
    );
  }
  if (typeof value !== "string") {
    const got = value === null ? "null" : Array.isArray(value) ? "an array" : typeof value;
    throw new ConcurrencyKeyError(run, `function returned ${got}, not a string`);
  }
  if (value.length === 0 || value.length > 512) {
    throw new ConcurrencyKeyError(run, `function returned a string of ${value.length} characters`);
  }
  const problem = textProblem(value);
  if (problem) throw new ConcurrencyKeyError(run, `function returned text that cannot be stored: ${problem}`);
  return { key: value, limit: c.limit };
}

/** How a run queued behind its limit reads: "queued behind 2 runs of customer c-9". */
export function queuedText(
  q: {
    key: string;
    limit: number;
    holders: Array<{ workflow: string; key: string }>;
    holderCount: number;
    ahead: number;
  },
  workflow: string,
  label: string | undefined,
): string {
  const of = q.key === "" ? `workflow "${workflow}"` : `${label ?? "key"} ${q.key}`;
  const names = q.holders.slice(0, 5).map((h) => `${h.workflow}/${h.key}`);
  const more = q.holderCount > names.length ? `, and ${q.holderCount - names.length} more` : "";
  const ahead = q.ahead > 0 ? `; ${q.ahead} older run${q.ahead === 1 ? "" : "s"} queued ahead of it` : "";
  const list = names.length ? `: ${names.join(", ")}${more}` : "";
  return `queued behind ${q.holderCount} run${q.holderCount === 1 ? "" : "s"} of ${of} (limit ${q.limit} at once${list})${ahead}`;
}

/** A run's concurrency limit as clients see it (engine.concurrency). */
export interface ConcurrencyInfo {
  /** The key's value ("" for a per-workflow limit). */
  key: string;
  limit: number;
  /** What a key value is ("customer"), from the workflow's code here, else "key". */
  label: string;
  /** True while the run holds one of its key's slots (running or retrying). */
  holding: boolean;
  /** True while the run waits for a slot: its limit is reached (see `text`). */
  queued: boolean;
  /** The runs holding its key's slots (other than itself), oldest first, at most 20. */
  holders: Array<{ workflow: string; key: string; status: RunStatus }>;
  /** How many other runs hold its key's slots. */
  holderCount: number;
  /** Older runs of its key queued for a slot before it. */
  ahead: number;
  /** "queued behind 2 runs of customer c-9 (limit 2 at once: ...)" while queued, else null. */
  text: string | null;
}

/** The concurrency view of a run from its row and its key's queue (null when its workflow has no limit). */
export function concurrencyInfo(
  row: RunRow,
  queue: ConcurrencyQueue | null,
  label: string | undefined,
): ConcurrencyInfo | null {
  if (!queue || row.concurrencyKey === null) return null;
  const holding = SLOT_STATUSES.includes(row.status);
  const live = !TERMINAL_STATUSES.includes(row.status);
  // Queued: the claim refused it (queuedAt), or it is pending and its key is full (not claimed yet).
  const full = queue.holderCount + queue.ahead >= queue.limit;
  const queued = live && !holding && (row.queuedAt !== null || (row.status === "pending" && full));
  const holders = queue.holders.map((h) => ({ workflow: h.workflow, key: h.key, status: h.status }));
  return {
    key: queue.key,
    limit: queue.limit,
    label: label ?? "key",
    holding,
    queued,
    holders,
    holderCount: queue.holderCount,
    ahead: queue.ahead,
    text: queued
      ? queuedText(
          { key: queue.key, limit: queue.limit, holders, holderCount: queue.holderCount, ahead: queue.ahead },
          row.workflow,
          label,
        )
      : null,
  };
}
