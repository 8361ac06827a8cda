// What an executing run needs from its engine; implemented by Engine, kept narrow so executions stay testable.

import type { EntryRow } from "../storage/store.js";
import type { Clock } from "./clock.js";
import type { RunExecution, Wait } from "./execution.js";
import type { WriteQueue } from "./write-queue.js";

export interface EngineCore {
  readonly clock: Clock;
  readonly writes: WriteQueue;
  /** This process's lease owner id. */
  readonly owner: string;
  /** Random numbers in [0, 1) for backoff jitter (injectable for tests). */
  random(): number;
  /** Arms the scheduler for a wait with a deadline held in memory. */
  watch(wait: Wait): void;
  unwatch(wait: Wait): void;
  /** The run suspended itself (its patch is queued); drop it from memory. */
  suspended(exec: RunExecution, status: string): void;
  /** The run completed or failed (its record is committed). */
  finished(exec: RunExecution, status: "completed" | "failed"): void;
  /** An entry's record is committed. */
  emitEntry(exec: RunExecution, row: EntryRow): void;
  emitBroadcast(exec: RunExecution, event: string, data: unknown): void;
}
