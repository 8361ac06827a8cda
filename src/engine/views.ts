// The public shapes of runs and history entries, built from stored rows.

import type { EntryRow, RunRow, RunStatus } from "../storage/store.js";
import {
  type Attempt,
  attemptsOf,
  type EntryKind,
  type EntryStatus,
  entryPath,
  type WaitKind,
} from "./entries.js";
import type { ErrorInfo } from "./error-info.js";
import { fromJson, type StateDiff } from "./json.js";

/** What a suspended run waits on. */
export interface WaitInfo {
  kind: WaitKind;
  /** Path of the entry that waits. */
  entry: string;
  queue?: string;
  /** The child run a child wait waits on, as "workflow/key". */
  child?: string;
  /** When it wakes (ms since epoch), or null for a queue wait with no timeout. */
  until: number | null;
}

/** A wait as answers show it: a wait on several queues is one wait, `queue` its first and `queues` all. */
export interface GroupedWait extends WaitInfo {
  /** A wait on several queues: all of them, in the order named. */
  queues?: string[];
}

/**
 * The run's waits with a wait on several queues (recorded once per queue) made one wait listing its
 * queues, in the order the run records them.
 */
export function groupWaits(waits: readonly WaitInfo[] | null): GroupedWait[] {
  const out: GroupedWait[] = [];
  const byEntry = new Map<string, GroupedWait>();
  for (const w of waits ?? []) {
    if (w.kind !== "queue" || w.queue === undefined) {
      out.push(w);
      continue;
    }
    const seen = byEntry.get(w.entry);
    if (!seen) {
      const first: GroupedWait = { ...w };
      byEntry.set(w.entry, first);
      out.push(first);
    } else if (seen.queue !== w.queue && !seen.queues?.includes(w.queue)) {
      seen.queues = [...(seen.queues ?? [seen.queue!]), w.queue];
    }
  }
  return out;
}

/** A run as clients see it. */
export interface RunInfo {
  id: number;
  workflow: string;
  key: string;
  version: number;
  status: RunStatus;
  input: unknown;
  state: unknown;
  output: unknown;
  error: ErrorInfo | null;
  waiting: WaitInfo[] | null;
  wakeAt: number | null;
  owner: string | null;
  leaseUntil: number | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** Id of the run that started this one with ctx.child, or null (see engine.family). */
  parentId: number | null;
  /** Names to values to find the run by (getOrCreate's tags, step.tag). */
  tags: Record<string, string>;
}

/** One history entry as clients see it. `id` is its seq, unique within the run. */
export interface HistoryEntry {
  id: number;
  path: string;
  scope: string;
  ordinal: number;
  name: string;
  kind: EntryKind;
  status: EntryStatus;
  startedAt: number | null;
  endedAt: number | null;
  durationMs: number | null;
  input?: unknown;
  output?: unknown;
  error?: ErrorInfo;
  attempts?: Attempt[];
  /** State paths (JSON Pointers, e.g. "/total") this entry changed, with values before and after. */
  stateChange?: StateDiff;
  /** Kind-specific facts: a sleep's `until`, a queue wait's `queue`/`messageId`/`timedOut`, a race's `winner`... */
  detail?: Record<string, unknown>;
}

export function toRunInfo(row: RunRow, tags: Record<string, string> = {}): RunInfo {
  return {
    id: row.id,
    workflow: row.workflow,
    key: row.key,
    version: row.version,
    status: row.status,
    input: fromJson(row.input) ?? null,
    state: fromJson(row.state),
    output: fromJson(row.output) ?? null,
    error: fromJson<ErrorInfo | undefined>(row.error) ?? null,
    waiting: fromJson<WaitInfo[] | undefined>(row.waiting) ?? null,
    wakeAt:
      row.status === "sleeping" || row.status === "waiting" || row.status === "retrying" ? row.wakeAt : null,
    owner: row.owner,
    leaseUntil: row.leaseUntil,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    finishedAt: row.finishedAt,
    parentId: row.parentRunId,
    tags,
  };
}

export function toHistoryEntry(row: EntryRow): HistoryEntry {
  const entry: HistoryEntry = {
    id: row.seq,
    path: entryPath(row.scope, row.name),
    scope: row.scope,
    ordinal: row.ordinal,
    name: row.name,
    kind: row.kind as EntryKind,
    status: row.status as EntryStatus,
    startedAt: row.startedAt,
    endedAt: row.endedAt,
    durationMs: row.startedAt !== null && row.endedAt !== null ? row.endedAt - row.startedAt : null,
  };
  if (row.input !== null) entry.input = JSON.parse(row.input);
  if (row.output !== null) entry.output = JSON.parse(row.output);
  if (row.error !== null) entry.error = JSON.parse(row.error) as ErrorInfo;
  const attempts = attemptsOf(row);
  if (row.attempts !== null || attempts.length > 0) {
    // A cancel closes the entry in one statement; the attempt it stopped ends with it.
    const last = attempts.at(-1);
    if (row.status === "cancelled" && last?.status === "running" && last.endedAt === undefined) {
      last.status = "cancelled";
      if (row.endedAt !== null) last.endedAt = row.endedAt;
    }
    entry.attempts = attempts;
  }
  if (row.stateDiff !== null) entry.stateChange = JSON.parse(row.stateDiff) as StateDiff;
  if (row.detail !== null) entry.detail = JSON.parse(row.detail) as Record<string, unknown>;
  return entry;
}
