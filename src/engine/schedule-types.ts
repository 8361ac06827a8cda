// What engine.schedules answers (a schedule as listed, and the list/pause/resume interface), apart from
// the schedules' machinery so the public interface names them without importing it.

import type { RunStatus } from "../storage/store.js";

/** A schedule as engine.schedules.list() shows it. */
export interface ScheduleInfo {
  name: string;
  workflow: string;
  /** When it fires: { cron, timezone } or { every }, with its overlap and catchUp policies. */
  spec: Record<string, unknown>;
  /** The next firing (ISO), or null while paused-then-resumed and not yet computed. */
  nextDue: string | null;
  paused: boolean;
  /** No longer declared by the code that last started: it does not fire. */
  orphaned: boolean;
  /** The latest firing: its due time (ISO) and "started", "skipped" (previous run unfinished) or why it failed. */
  last: { due: string; outcome: string } | null;
  /** The run the latest started firing created, with its status now. */
  lastRun: { id: number; key: string; status: RunStatus } | null;
}

/** engine.schedules: list, pause and resume the schedules of setup({ schedules }). */
export interface ScheduleControl {
  /** Every schedule in the database (orphaned ones too), by name. */
  list(): Promise<ScheduleInfo[]>;
  /** Stops a schedule firing until resumed (every process sharing the database). */
  pause(name: string): Promise<ScheduleInfo>;
  /** Lets a paused schedule fire again, from its next firing after now (missed ones are not caught up). */
  resume(name: string): Promise<ScheduleInfo>;
}
