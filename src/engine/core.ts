// What an executing run needs from its engine; implemented by Engine, kept narrow so executions stay testable.

import type { RunMetrics } from "../observability/metrics.js";
import type { EntryRow } from "../storage/store.js";
import type { ChildRuns } from "./child-runs.js";
import type { Clock } from "./clock.js";
import type { WaitKind } from "./entries.js";
import type { Scope } from "./history.js";
import type { WriteQueue } from "./write-queue.js";

/** Which run something is about (an executing run is one). */
export interface RunIdentity {
  readonly id: number;
  readonly workflow: string;
  readonly key: string;
}

/** Something a run waits for without holding a step in flight. */
export interface Wait {
  kind: WaitKind;
  deadline: number | null;
  /** A queue wait's queues: a message on any of them releases it. */
  queues?: readonly string[];
  /** A child wait's child run: its id and "workflow/key". */
  child?: { id: number; label: string };
  scope: Scope;
  path: string;
  /** The execution that waits; the scheduler releases the wait through it when its deadline passes. */
  exec: RunIdentity & { release(wait: Wait): void };
  resolve(): void;
  reject(err: unknown): void;
}

/** The part of ChildRuns an execution uses. */
export type ChildRunsCore = Pick<ChildRuns, "start" | "byId" | "byKey" | "nameOf" | "watch" | "unwatch">;

export interface EngineCore {
  readonly clock: Clock;
  readonly writes: WriteQueue;
  /** This process's lease owner id. */
  readonly owner: string;
  /** Counters and histograms of this engine (observability/metrics.ts). */
  readonly metrics: RunMetrics;
  /** Random numbers in [0, 1) for backoff jitter (injectable for tests). */
  random(): number;
  /** Arms the scheduler for a wait with a deadline held in memory. */
  watch(wait: Wait): void;
  unwatch(wait: Wait): void;
  /** ctx.child's runs: created, found, and their ends delivered to waiting parents (child-runs.ts). */
  readonly childRuns: ChildRunsCore;
  /** The run suspended itself (its patch is queued); drop it from memory. */
  suspended(exec: RunIdentity, status: string): void;
  /** The run completed, failed or was cancelled (its record, with `fields`, is committed). */
  finished(
    exec: RunIdentity,
    status: "completed" | "failed" | "cancelled",
    fields?: { output?: string | null; error?: string },
  ): void;
  /** The run's status changed while it executes here (rolling-back): tell the listeners. */
  statusChanged(exec: RunIdentity, status: "rolling-back"): void;
  /** An entry's record is committed. */
  emitEntry(exec: RunIdentity, row: EntryRow): void;
  emitBroadcast(exec: RunIdentity, event: string, data: unknown): void;
  /** The tags a run holds as committed (step.tag's limit counts them). */
  runTags(runId: number): Promise<Record<string, string>>;
}
