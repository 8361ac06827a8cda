// The pure part of comparing two runs: from both runs' entries (and a way to read the state at an entry)
// to where their histories first differ, the outputs that differ, and timing outliers. No database here.

import type { HistoryEntry } from "../engine/views.js";
import { errorLine } from "../format.js";
import type {
  EntryFacts,
  FirstDifference,
  OutputDifference,
  TimingOutlier,
  ValueDiff,
} from "./compare-types.js";
import { pointerDiff } from "./pointer-diff.js";

/** Changes kept per value, entries with differing outputs kept, timing outliers kept. */
export const COMPARE_LIMITS = { changes: 50, outputs: 50, outliers: 20 };

/** A step is a timing outlier when the slower side took this many times the faster and this much longer. */
export const OUTLIER_FACTOR = 5;
export const OUTLIER_MIN_MS = 100;

/** The differences of two values as pointers, `run` being the first run's value and `other` the second's. */
export function valueDiff(run: unknown, other: unknown, limit = COMPARE_LIMITS.changes): ValueDiff {
  const d = pointerDiff(run, other, { limit });
  return {
    changes: d.changes.map((c) => ({
      pointer: c.pointer,
      ...("a" in c ? { run: c.a } : {}),
      ...("b" in c ? { other: c.b } : {}),
    })),
    total: d.total,
    more: d.more,
  };
}

/** An entry's facts; its error is its last attempt's (the code's own, not the step's wrapper) when it has one. */
function facts(e: HistoryEntry): EntryFacts {
  const error = e.attempts?.at(-1)?.error ?? e.error;
  return {
    id: e.id,
    kind: e.kind,
    status: e.status,
    ...(error ? { error: errorLine(error, 300) } : {}),
    durationMs: e.durationMs,
  };
}

/** One run's side: its entries in the order first recorded, and its state at an entry (null: at its end). */
export interface Side {
  entries: HistoryEntry[];
  stateBefore(entry: HistoryEntry | null): unknown;
}

/** Where the histories first part, in the run's order, then (for entries only the other has) the other's. */
export function firstDifference(run: Side, other: Side): FirstDifference | null {
  const theirs = new Map(other.entries.map((e) => [e.path, e]));
  const ours = new Set(run.entries.map((e) => e.path));
  let found: { path: string; reason: FirstDifference["reason"]; a?: HistoryEntry; b?: HistoryEntry } | null =
    null;
  for (const a of run.entries) {
    const b = theirs.get(a.path);
    if (!b) found = { path: a.path, reason: "only-in-run", a };
    else if (b.kind !== a.kind) found = { path: a.path, reason: "kind", a, b };
    else if (b.status !== a.status) found = { path: a.path, reason: "status", a, b };
    if (found) break;
  }
  if (!found) {
    const b = other.entries.find((e) => !ours.has(e.path));
    if (b) found = { path: b.path, reason: "only-in-other", b };
  }
  if (!found) return null;
  return {
    path: found.path,
    reason: found.reason,
    run: found.a ? facts(found.a) : null,
    other: found.b ? facts(found.b) : null,
    state: valueDiff(run.stateBefore(found.a ?? null), other.stateBefore(found.b ?? null)),
  };
}

/** Completed entries both runs have (same path and kind), in the run's order, with the other's entry. */
function shared(run: Side, other: Side): Array<[HistoryEntry, HistoryEntry]> {
  const theirs = new Map(other.entries.map((e) => [e.path, e]));
  const out: Array<[HistoryEntry, HistoryEntry]> = [];
  for (const a of run.entries) {
    const b = theirs.get(a.path);
    if (b && b.kind === a.kind && a.status === "completed" && b.status === "completed") out.push([a, b]);
  }
  return out;
}

/** The completed entries both have whose outputs differ (at most COMPARE_LIMITS.outputs kept, all counted). */
export function outputDifferences(
  run: Side,
  other: Side,
): { differing: OutputDifference[]; total: number; shared: number } {
  const pairs = shared(run, other);
  const differing: OutputDifference[] = [];
  let total = 0;
  for (const [a, b] of pairs) {
    if (a.output === undefined && b.output === undefined) continue;
    const limit = differing.length < COMPARE_LIMITS.outputs ? COMPARE_LIMITS.changes : 0;
    const diff = valueDiff(a.output, b.output, limit);
    if (diff.total === 0) continue;
    total++;
    if (differing.length < COMPARE_LIMITS.outputs)
      differing.push({ path: a.path, kind: a.kind, run: a.id, other: b.id, diff });
  }
  return { differing, total, shared: pairs.length };
}

/** Steps both completed whose durations differ by OUTLIER_FACTOR and OUTLIER_MIN_MS, the widest gap first. */
export function timingOutliers(run: Side, other: Side): { outliers: TimingOutlier[]; total: number } {
  const all: TimingOutlier[] = [];
  for (const [a, b] of shared(run, other)) {
    if (a.kind !== "step" || a.durationMs === null || b.durationMs === null) continue;
    const slow = Math.max(a.durationMs, b.durationMs);
    const fast = Math.min(a.durationMs, b.durationMs);
    const factor = slow / Math.max(fast, 1);
    if (factor < OUTLIER_FACTOR || slow - fast < OUTLIER_MIN_MS) continue;
    all.push({
      path: a.path,
      run: a.id,
      other: b.id,
      runMs: a.durationMs,
      otherMs: b.durationMs,
      factor: Math.round(factor * 10) / 10,
    });
  }
  all.sort((x, y) => Math.abs(y.runMs - y.otherMs) - Math.abs(x.runMs - x.otherMs));
  return { outliers: all.slice(0, COMPARE_LIMITS.outliers), total: all.length };
}
