// The shape of a comparison of two runs (compare_runs, diagnose_run's evidence): where their histories first
// differ, their inputs, the state there, the outputs of the steps both ran, timing outliers, code versions.

import type { EntryKind, EntryStatus } from "../engine/entries.js";
import type { RunStatus } from "../storage/rows.js";

/** One side of a comparison. */
export interface ComparedRun {
  id: number;
  workflow: string;
  key: string;
  status: RunStatus;
  version: number;
  createdAt: number;
  finishedAt: number | null;
  /** History entries of the workflow's own (replay markers left out). */
  entries: number;
}

/** One place two values differ, as an RFC 6901 JSON Pointer; a side's value is absent when it has none there. */
export interface ValueChange {
  pointer: string;
  run?: unknown;
  other?: unknown;
}

/** The changes kept (document order) and how many there are (`more`: counting stopped at 10,000). */
export interface ValueDiff {
  changes: ValueChange[];
  total: number;
  more: boolean;
}

/** An entry as the first difference shows it on one side. */
export interface EntryFacts {
  /** Entry id (its seq): get_step takes it. */
  id: number;
  kind: EntryKind;
  status: EntryStatus;
  /** Its error, one line ("TypeError: ..."), when it has one. */
  error?: string;
  durationMs: number | null;
}

/** Why the histories part at an entry. */
export type DifferenceReason = "status" | "kind" | "only-in-run" | "only-in-other";

/** The first entry (in the run's order, then the other's) where the two histories differ. */
export interface FirstDifference {
  path: string;
  reason: DifferenceReason;
  /** The entry in the run, or null when only the other has it. */
  run: EntryFacts | null;
  other: EntryFacts | null;
  /** The run's state where each side reached this entry: just before it, or the side's last state without it. */
  state: ValueDiff;
}

/** A completed entry both runs have whose outputs differ. */
export interface OutputDifference {
  path: string;
  kind: EntryKind;
  /** Entry ids in the run and in the other. */
  run: number;
  other: number;
  diff: ValueDiff;
}

/** A step both ran whose duration differs by a large factor. */
export interface TimingOutlier {
  path: string;
  run: number;
  other: number;
  runMs: number;
  otherMs: number;
  /** Slower over faster (the faster counted as at least 1 ms). */
  factor: number;
}

/** Two runs compared. */
export interface RunComparison {
  run: ComparedRun;
  other: ComparedRun;
  /** "given": the caller named the other run; "latest-completed": the latest completed run of the same workflow and version. */
  otherChosen: "given" | "latest-completed";
  versions: { run: number; other: number; differ: boolean };
  /** Null when every entry of each is in the other with the same kind and status. */
  firstDifference: FirstDifference | null;
  input: ValueDiff;
  /** Completed entries both have whose outputs differ, in the run's order; `shared`: completed entries both have. */
  outputs: { differing: OutputDifference[]; total: number; shared: number };
  timing: { outliers: TimingOutlier[]; total: number };
}

/** No run to compare with: why, and the latest completed runs on other versions of the workflow, if any. */
export interface NoComparison {
  run: ComparedRun;
  other: null;
  reason: string;
  otherVersions: Array<{ key: string; version: number; finishedAt: number | null }>;
}
