// What the inspector's API answers: runs, entries and values cut to a size a browser draws quickly.

import type { Diagnosis, FailureList } from "../diagnosis/types.js";
import type { EntryDetail, SendResult } from "../engine/api.js";
import type { AuditEntry } from "../engine/audit-types.js";
import type { ConcurrencyInfo } from "../engine/concurrency.js";
import { type Attempt, isContainer, isMarker, isWait } from "../engine/entries.js";
import type { ErrorInfo } from "../engine/error-info.js";
import type { ReplayPlan } from "../engine/replay.js";
import type { RollbackSummary } from "../engine/rollback-summary.js";
import type { ScheduleInfo } from "../engine/schedules.js";
import type { HistoryEntry, RunInfo, WaitInfo } from "../engine/views.js";
import { cut } from "../format.js";
import type { RunStatus } from "../storage/store.js";

/** A value too large to send whole: its size and the start of its JSON. */
export interface Clipped {
  $clipped: true;
  bytes: number;
  preview: string;
}

/** The value itself, or a Clipped marker when its JSON is longer than `max` characters. */
export function clip(value: unknown, max: number): unknown {
  if (value === undefined) return null;
  const text = JSON.stringify(value) ?? "null";
  if (text.length <= max) return value;
  return { $clipped: true, bytes: Buffer.byteLength(text), preview: text.slice(0, 2000) } satisfies Clipped;
}

/** One row of the runs list. */
export interface RunRow {
  id: number;
  workflow: string;
  key: string;
  status: string;
  version: number;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  error: BriefError | null;
  waiting: WaitInfo[] | null;
  /** Names to values to find the run by. */
  tags: Record<string, string>;
}

export function runRow(r: RunInfo): RunRow {
  return {
    id: r.id,
    workflow: r.workflow,
    key: r.key,
    status: r.status,
    version: r.version,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    finishedAt: r.finishedAt,
    error: briefError(r.error),
    waiting: r.waiting,
    tags: r.tags,
  };
}

/** An error in a line or two: its name and message, and for a failed step the step and what it threw. */
export interface BriefError {
  name: string;
  message: string;
  step?: string;
  cause?: string;
}

function briefError(e: ErrorInfo | null | undefined): BriefError | null {
  if (!e) return null;
  const out: BriefError = { name: e.name, message: cut(e.message, 500) };
  const step = e.details?.step;
  const cause = e.details?.cause as { name?: unknown; message?: unknown } | undefined;
  if (typeof step === "string") out.step = step;
  if (cause && typeof cause.message === "string")
    out.cause = cut(`${typeof cause.name === "string" ? `${cause.name}: ` : ""}${cause.message}`, 500);
  return out;
}

/** An entry as the timeline needs it: timing, attempts and status, no values. */
export interface EntryBar {
  id: number;
  path: string;
  scope: string;
  name: string;
  kind: string;
  /** Derived from the kind, so the page needs no list of kinds: it holds branches or iterations as lanes. */
  container: boolean;
  /** A sleep or a queue wait: time spent waiting, not working. */
  wait: boolean;
  /** A point in history (a version pin, a replay), drawn as a marker rather than a bar. */
  marker: boolean;
  status: string;
  startedAt: number | null;
  endedAt: number | null;
  attempts: Array<Omit<Attempt, "error"> & { error?: BriefError }>;
  error: BriefError | null;
  /** Small kind-specific facts (a sleep's until, a queue wait's queue, a race's winner). */
  detail: Record<string, unknown>;
}

export function entryBar(e: HistoryEntry): EntryBar {
  const detail: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(e.detail ?? {})) {
    if ((JSON.stringify(v) ?? "").length <= 300) detail[k] = v;
  }
  return {
    id: e.id,
    path: e.path,
    scope: e.scope,
    name: e.name,
    kind: e.kind,
    container: isContainer(e.kind),
    wait: isWait(e.kind),
    marker: isMarker(e.kind),
    status: e.status,
    startedAt: e.startedAt,
    endedAt: e.endedAt,
    attempts: (e.attempts ?? []).map(({ error, ...a }) => {
      const brief = briefError(error);
      return brief ? { ...a, error: brief } : a;
    }),
    error: briefError(e.error),
    detail,
  };
}

// ---- the API's answers, as the page reads them (src/inspector/static imports these types) ----------

/** GET /api/meta. */
export interface MetaAnswer {
  readOnly: boolean;
  /** True when this process has no workflow code: another process executes the runs. */
  attached: boolean;
  diagnosis: boolean;
  statuses: readonly RunStatus[];
  serverNow: number;
}

/** A workflow in GET /api/workflows: versions, queues and run counts by status. */
export interface WorkflowRow {
  name: string;
  versions: number[];
  latest: number;
  description: string | null;
  queues: string[];
  runs: Record<string, number>;
}

/** GET /api/workflows. */
export interface WorkflowsAnswer {
  workflows: WorkflowRow[];
  /** Runs by status over every workflow. */
  totals: Record<string, number>;
}

/** GET /api/schedules: every schedule (engine.schedules.list()), by name. */
export interface SchedulesAnswer {
  schedules: ScheduleInfo[];
}

/** GET /api/runs: a page of runs, newest first. */
export interface RunsAnswer {
  runs: RunRow[];
  nextCursor: string | null;
  serverNow: number;
}

/** A run whole, as its view shows it (values clipped to a size a browser draws quickly). */
export interface RunDetail extends Omit<RunRow, "error"> {
  error: ErrorInfo | null;
  input: unknown;
  state: unknown;
  output: unknown;
  wakeAt: number | null;
  /** A process holds a live lease on it and is running its code now. */
  executing: boolean;
}

/** What a run waits on, with the JSON Schema of the queue's messages when a process published one. */
export interface WaitView extends WaitInfo {
  messageSchema?: unknown;
}

/** A queue of the run's workflow version and the JSON Schema of its messages. */
export interface QueueView {
  name: string;
  schema: unknown;
}

/** What the page may do with a run (nothing on a read-only server). */
export interface RunActions {
  send: boolean;
  cancel: boolean;
  replay: boolean;
}

/** A run of a family (the parent or a child), by address, with its status. */
export interface FamilyRun {
  workflow: string;
  key: string;
  status: string;
}

/** GET /api/runs/:workflow/:key. */
export interface RunAnswer {
  run: RunDetail;
  /** The run that started this one with ctx.child, or null. */
  parent: FamilyRun | null;
  /** The runs this one started with ctx.child (the first 100), each with its ctx.child entry's path. */
  children: Array<FamilyRun & { entry: string | null; detached: boolean }>;
  waiting: WaitView[];
  queues: QueueView[];
  /** The run's concurrency limit: the slot it holds, or the runs it is queued behind (null: no limit). */
  concurrency: ConcurrencyInfo | null;
  can: RunActions;
  /** The writes made to this run (MCP, inspector, CLI), newest first: how many, and the latest 20. */
  writes?: { count: number; entries: AuditEntry[] };
  /** What a rollback undid and did not (failed, cancelled or rolling-back runs with handlers), else null. */
  rollback: RollbackSummary | null;
  serverNow: number;
}

/** GET /api/runs/:workflow/:key/history: the first entries' bars, and whether more exist. */
export interface HistoryAnswer {
  entries: EntryBar[];
  truncated: boolean;
  serverNow: number;
}

/** One entry whole with the state before and after it (values, its detail too, clipped when very large). */
export interface EntryWhole extends Omit<EntryDetail, "detail" | "stateChange"> {
  detail: unknown;
  stateChange: unknown;
}

/** GET /api/runs/:workflow/:key/entries/:id. */
export interface EntryAnswer {
  entry: EntryWhole;
}

/** GET /api/runs/:workflow/:key/diagnosis. */
export interface DiagnosisAnswer {
  diagnosis: Diagnosis;
}

/** POST .../messages. */
export interface SendAnswer extends SendResult {
  queue: string;
}

/** POST .../replay: the plan (a dry run, or what was done), or a request left for the process that runs it. */
export type ReplayAnswer = ReplayPlan | { requested: true; message: string };

/** POST .../cancel. */
export interface CancelAnswer {
  status: RunStatus | "requested";
}

/** GET /api/failures: failing runs grouped by signature (list_failures' answer). */
export interface FailuresAnswer extends FailureList {
  serverNow: number;
}

/** POST /api/bulk/replay: a dry run's preview, or what the real call did. */
export type {
  BulkPreview as BulkPreviewAnswer,
  BulkResult as BulkResultAnswer,
} from "../engine/bulk-types.js";
