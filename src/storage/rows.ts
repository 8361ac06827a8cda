// The rows the store keeps and answers (runs, entries, messages, schedules, queries and counts), as plain types.

/** Statuses a run can be in. Terminal: completed, failed, cancelled. Rolling-back: undoing completed steps. */
export type RunStatus =
  | "pending"
  | "running"
  | "sleeping"
  | "waiting"
  | "retrying"
  | "rolling-back"
  | "completed"
  | "failed"
  | "cancelled";

export const TERMINAL_STATUSES: readonly RunStatus[] = ["completed", "failed", "cancelled"];
export const RUN_STATUSES: readonly RunStatus[] = [
  "pending",
  "running",
  "sleeping",
  "waiting",
  "retrying",
  "rolling-back",
  "completed",
  "failed",
  "cancelled",
];

/** The statuses of a run not finished yet, as an SQL list both stores use: one the status index can seek, where NOT IN the finished ones scans. */
export const LIVE_STATUSES_SQL = `(${RUN_STATUSES.filter((s) => !TERMINAL_STATUSES.includes(s))
  .map((s) => `'${s}'`)
  .join(", ")})`;

/** One run as stored. JSON-typed fields hold JSON text. */
export interface RunRow {
  id: number;
  workflow: string;
  key: string;
  version: number;
  status: RunStatus;
  input: string | null;
  initialState: string;
  state: string;
  output: string | null;
  error: string | null;
  /** JSON: what the run waits on while suspended (for people and clients). */
  waiting: string | null;
  /** `|q1|q2|` while suspended on queues, else null. */
  waitQueues: string | null;
  /** When the scheduler should look at this run again (due time, or lease expiry while owned). */
  wakeAt: number | null;
  owner: string | null;
  leaseUntil: number | null;
  createdAt: number;
  updatedAt: number;
  finishedAt: number | null;
  /** While failed or retrying: the failure's signature (see failure-signature.ts), else null. Indexed. */
  failureSignature: string | null;
  /** The W3C traceparent of the run's trace (observability/tracing.ts), so every execution joins one trace; null without a tracer. */
  traceContext: string | null;
  /** The run that started this one with ctx.child, or null. */
  parentRunId: number | null;
  /** `|12|15|` while suspended waiting on child runs (ids), else null. */
  waitRuns: string | null;
  /** The run's concurrency key value ("" for a per-workflow limit), or null when its workflow has no limit. */
  concurrencyKey: string | null;
  /** How many runs of its workflow and concurrency key may execute at once (recorded at creation), or null. */
  concurrencyLimit: number | null;
  /** Since when the run waits for a concurrency slot (the claim found its limit reached), else null. */
  queuedAt: number | null;
}

/** Statuses in which a run holds a concurrency slot (it executes, retries, backoff included, or rolls back). */
export const SLOT_STATUSES: readonly RunStatus[] = ["running", "retrying", "rolling-back"];

/** What a run of a limited workflow waits behind: the runs holding its key's slots, and older runs queued first. */
export interface ConcurrencyQueue {
  key: string;
  limit: number;
  /** Runs holding a slot of the key (running or retrying), oldest first, at most 20. */
  holders: Array<{ id: number; workflow: string; key: string; status: RunStatus }>;
  /** How many holders there are in all. */
  holderCount: number;
  /** Older unfinished runs of the key queued for a slot before this one. */
  ahead: number;
}

/** One history entry as stored; keyed by (runId, seq). */
export interface EntryRow {
  runId: number;
  seq: number;
  scope: string;
  ordinal: number;
  name: string;
  kind: string;
  status: string;
  startedAt: number | null;
  endedAt: number | null;
  input: string | null;
  output: string | null;
  error: string | null;
  attempts: string | null;
  detail: string | null;
  stateSeq: number | null;
  stateDiff: string | null;
}

/** The columns a completed step is loaded without for replay (LoadedRun): read them with Store.getEntry. */
export const UNLOADED_FIELDS = ["startedAt", "endedAt", "input", "error", "attempts"] as const;

/**
 * A completed step as loaded for replay: what replay reads (name, kind, status, output, detail, state
 * seq and diff), without its times, input, error and attempts. Reading or setting one of those throws
 * (an engine bug: nothing rewrites a completed step it loaded), so no caller mistakes "not loaded" for
 * "none"; Store.getEntry returns the whole row. The prototype holds the throwing accessors: one shared
 * shape, no per-entry cost.
 */
export class ReplayEntry {
  // Declared, then set in the constructor: class fields would each be defined (as undefined) first, which
  // cost as much again for the thousands a long history loads.
  declare runId: number;
  declare seq: number;
  declare scope: string;
  declare ordinal: number;
  declare name: string;
  declare kind: string;
  declare status: string;
  declare output: string | null;
  declare detail: string | null;
  declare stateSeq: number | null;
  declare stateDiff: string | null;

  constructor(
    runId: number,
    seq: number,
    scope: string,
    ordinal: number,
    name: string,
    kind: string,
    status: string,
    output: string | null,
    detail: string | null,
    stateSeq: number | null,
    stateDiff: string | null,
  ) {
    this.runId = runId;
    this.seq = seq;
    this.scope = scope;
    this.ordinal = ordinal;
    this.name = name;
    this.kind = kind;
    this.status = status;
    this.output = output;
    this.detail = detail;
    this.stateSeq = stateSeq;
    this.stateDiff = stateDiff;
  }
}
for (const field of UNLOADED_FIELDS) {
  const fail = function (this: ReplayEntry): never {
    throw new Error(
      `internal: entry ${this.seq} ("${this.name}") was loaded for replay without its ${field}; read it with Store.getEntry.`,
    );
  };
  Object.defineProperty(ReplayEntry.prototype, field, { get: fail, set: fail, enumerable: false });
}

/** True for an entry loaded without its times, input, error and attempts (see ReplayEntry). */
export function isReplayEntry(row: object): boolean {
  return row instanceof ReplayEntry;
}

/**
 * One row of a run's history as loadRuns answers it, from the replay columns plus `rest`: null for a
 * completed step (a ReplayEntry), else the JSON array [startedAt, endedAt, input, error, attempts].
 */
export function loadedEntry(
  runId: number,
  seq: number,
  scope: string,
  ordinal: number,
  name: string,
  kind: string,
  status: string,
  output: string | null,
  detail: string | null,
  stateSeq: number | null,
  stateDiff: string | null,
  rest: string | null,
): EntryRow {
  if (rest === null)
    return new ReplayEntry(
      runId,
      seq,
      scope,
      ordinal,
      name,
      kind,
      status,
      output,
      detail,
      stateSeq,
      stateDiff,
    ) as unknown as EntryRow;
  const [startedAt, endedAt, input, error, attempts] = JSON.parse(rest) as [
    number | null,
    number | null,
    string | null,
    string | null,
    string | null,
  ];
  return {
    runId,
    seq,
    scope,
    ordinal,
    name,
    kind,
    status,
    startedAt,
    endedAt,
    input,
    output,
    error,
    attempts,
    detail,
    stateSeq,
    stateDiff,
  };
}

export interface MessageRow {
  id: number;
  runId: number;
  queue: string;
  body: string;
  sentAt: number;
  idempotencyKey: string | null;
  consumedAt: number | null;
  /** Seq of the entry that consumed it. */
  consumedBy: number | null;
}

/** A message refused before it was stored (schema error, unknown queue), kept so a diagnosis can show it. */
export interface RejectionRow {
  id: number;
  runId: number;
  queue: string;
  /** The body as sent, truncated to 2,000 characters. */
  body: string;
  error: string;
  at: number;
}

export interface RequestRow {
  id: number;
  runId: number;
  kind: string;
  args: string;
  createdAt: number;
}

/** What a process that runs a workflow publishes about it, so processes without its code can validate and show it. */
export interface WorkflowMeta {
  name: string;
  version: number;
  description: string | null;
  /** JSON: queue name to the JSON Schema of its messages. */
  queues: string;
  /** JSON: action names. */
  actions: string;
  registeredAt: number;
}

/** A run claimDue claimed, with the owner whose expired lease it took over (null when nobody held it). */
export type ClaimedRun = RunRow & { takenFrom: string | null };

/** One tag of a run: a name and its exact value (engine/tags.ts holds the limits). */
export interface TagRow {
  runId: number;
  name: string;
  value: string;
}

export interface RunQuery {
  workflow?: string;
  /** Only runs holding every one of these tags with exactly these values (ANDed). */
  tags?: Record<string, string>;
  status?: RunStatus[];
  key?: string;
  /** Substring of the key. */
  keyContains?: string;
  /** Substring of the error text. */
  errorContains?: string;
  createdAfter?: number;
  createdBefore?: number;
  /** Only runs on this workflow version. */
  version?: number;
  /** Only runs whose stored failure signature is this one (failed or retrying runs). */
  failureSignature?: string;
  /** Keyset cursor: runs strictly older than this (createdAt, id) pair. */
  before?: { createdAt: number; id: number };
  limit: number;
}

export interface RunCount {
  workflow: string;
  version: number;
  status: RunStatus;
  count: number;
}

/** Failed and retrying runs grouped by stored failure signature. */
export interface FailureGroupQuery {
  /** Failures at or after this time (a failed run's finishedAt, a retrying one's updatedAt). */
  since: number;
  workflow?: string;
  signature?: string;
  /** Only runs holding every one of these tags with exactly these values (ANDed). */
  tags?: Record<string, string>;
  limit: number;
}

/** One signature counted across runs. */
export interface FailureGroupRow {
  signature: string;
  workflow: string;
  count: number;
  /** How many of them are retrying (the rest failed). */
  retrying: number;
  firstAt: number;
  lastAt: number;
}

/** A schedule as stored: when it fires next, whether it is paused, and its latest firing. */
export interface ScheduleRow {
  name: string;
  workflow: string;
  /** JSON: when it fires ({ cron, timezone } or { every }) and its overlap and catch-up policies. */
  spec: string;
  /** The next firing (ms); null until a process with its code computes it (after a resume). */
  nextDue: number | null;
  paused: boolean;
  /** The code of the process that last started without it: it fires no more. */
  orphaned: boolean;
  /** Due time of the latest firing (started or skipped). */
  lastDue: number | null;
  /** "started" or "skipped" (the previous run was unfinished), or why the firing failed. */
  lastOutcome: string | null;
  /** The run the latest started firing created. */
  lastRunId: number | null;
  updatedAt: number;
}

/** A schedule declared by code, as syncSchedules takes it. */
export interface ScheduleDecl {
  name: string;
  workflow: string;
  spec: string;
  /** Its first firing, used when the row is new or its spec changed. */
  nextDue: number | null;
}

/** A compare-and-set of a schedule's next firing (see Store.advanceSchedule). */
export interface ScheduleAdvance {
  name: string;
  /** The next_due the caller read; the advance happens only if it is still stored. */
  expected: number | null;
  next: number | null;
  /** The firing recorded (due time and outcome), or null to move next_due only. */
  fired: { due: number; outcome: string } | null;
  now: number;
}

/** Where a write came from. */
export const AUDIT_SURFACES = ["mcp", "inspector", "cli"] as const;
export type AuditSurface = (typeof AUDIT_SURFACES)[number];

/** One write as the audit holds it. IMPORTANT: append-only: no Store method changes or removes one. */
export interface AuditRow {
  id: number;
  /** When it was made (ms, the engine's clock). */
  at: number;
  surface: AuditSurface;
  /** JSON: who made it (MCP client name, version and session; the inspector's session; the CLI's user and pid). */
  client: string;
  /** What was asked: the tool's name (send_message...), or the inspector's or CLI's name for it. */
  action: string;
  /** The run it targets, as named (a refused write may name a run that does not exist). */
  workflow: string | null;
  runKey: string | null;
  runId: number | null;
  /** JSON text of the arguments, cut to a bound (`argsCut` says so). */
  args: string;
  argsCut: boolean;
  ok: boolean;
  /** The error code and message of a refused or failed write; null when it succeeded. */
  errorCode: string | null;
  errorMessage: string | null;
}

/** A write to append (the store gives its id). */
export type AuditAppend = Omit<AuditRow, "id">;

/** Which audit rows to read, newest first. */
export interface AuditFilter {
  runId?: number;
  workflow?: string;
  runKey?: string;
  surface?: AuditSurface;
  /** At or after this time (ms). */
  since?: number;
  /** Before this time (ms). */
  until?: number;
}

export interface AuditQuery extends AuditFilter {
  /** Only rows with an id below this (the previous page's last id). */
  beforeId?: number;
  limit: number;
}

/** Finished runs a retention rule covers: those of `workflow` with `status` that finished before `finishedBefore`. */
export interface RetentionRule {
  workflow: string;
  status: "completed" | "failed" | "cancelled";
  /** Runs that finished strictly before this time (ms) are expired. */
  finishedBefore: number;
}

/** Runs counted (or deleted) by workflow and status. */
export interface PrunedCount {
  workflow: string;
  status: "completed" | "failed" | "cancelled";
  count: number;
}

/** What a bulk action (replay_runs, cancel_runs) does to each run of its plan. */
export type PlanAction = "replay" | "cancel";

/** A bulk plan as stored: the pinned set of runs a dry run chose, acted on by a later real call. */
export interface PlanRow {
  /** The opaque token clients pass back. */
  token: string;
  action: PlanAction;
  /** JSON: the selector and options the plan was made with (shown again, never re-run). */
  spec: string;
  createdAt: number;
  /** After this a plan that has not started is refused (a started one may be carried on). */
  expiresAt: number;
  /** How many runs the plan pins. */
  total: number;
}

/** One run of a plan, in the plan's order, with what became of it (outcome null until acted on). */
export interface PlanRunRow {
  position: number;
  runId: number;
  /** "replayed", "requested", "cancelled", "refused", "skipped", or null while pending. */
  outcome: string | null;
  /** Why it was refused or skipped (null otherwise). */
  reason: string | null;
  doneAt: number | null;
}

/** What became of one run of a plan, as recorded (see Store.recordPlanOutcomes). */
export interface PlanOutcome {
  runId: number;
  outcome: string;
  reason: string | null;
}
