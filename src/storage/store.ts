// The storage boundary: the engine talks to durable state only through this interface.
//
// IMPORTANT invariants every implementation keeps:
// - `commit(batch)` is atomic: all of a batch's writes land, or none do (and it rejects).
// - JSON columns are opaque strings here; the engine serialises, the store never parses them.
// - Times are milliseconds since the epoch from the engine's injected clock; SQL never calls `now`.
// - A message insert wakes its run (sets wake_at to the batch's `now`) when the run is suspended
//   waiting on that queue (`wait_queues` holds it); a suspend patch (`waitQueues` set) wakes the run at once if a matching
//   unconsumed message already exists. Together these make a wake-up impossible to lose.
// - A run's end (a patch to a terminal status, or cancelRun) wakes its parent at once when the parent is
//   suspended waiting on it (`wait_runs` holds its id); a suspend patch (`waitRuns` set) wakes the run at
//   once if one of those children already ended. The same commit does both, so a child's end is never lost.
// - Run ids, entry seqs and message ids only grow.

/** Statuses a run can be in. Terminal: completed, failed, cancelled. */
export type RunStatus =
  | "pending"
  | "running"
  | "sleeping"
  | "waiting"
  | "retrying"
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
  "completed",
  "failed",
  "cancelled",
];

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

export interface CreateRun {
  workflow: string;
  key: string;
  version: number;
  input: string | null;
  initialState: string;
  now: number;
  /** Claim it for this owner at once (the creating engine runs it) or leave it for the scheduler. */
  owner: string | null;
  leaseUntil: number | null;
  /** The run's trace (a W3C traceparent), when a tracer is registered. */
  traceContext?: string | null;
  /** The run starting this one with ctx.child. */
  parentRunId?: number | null;
}

export interface CreateResult {
  run: RunRow;
  created: boolean;
}

export interface NewMessage {
  runId: number;
  queue: string;
  body: string;
  idempotencyKey: string | null;
  now: number;
}

export interface MessageResult {
  id: number;
  /** True when the idempotency key had been used: nothing new was stored. */
  duplicate: boolean;
}

/** A partial update of one run; only the fields present are written. */
export interface RunPatch {
  id: number;
  status?: RunStatus;
  state?: string;
  output?: string | null;
  error?: string | null;
  waiting?: string | null;
  waitQueues?: string | null;
  wakeAt?: number | null;
  owner?: string | null;
  leaseUntil?: number | null;
  version?: number;
  updatedAt?: number;
  finishedAt?: number | null;
  failureSignature?: string | null;
  traceContext?: string | null;
  waitRuns?: string | null;
}

/** Everything a turn of the engine writes, committed in one transaction. */
export interface WriteBatch {
  now: number;
  creates: CreateRun[];
  messages: NewMessage[];
  entries: EntryRow[];
  /** Entries removed by seq (a replay's discarded entries, a loop's compacted iterations); applied before `entries`. */
  deleteEntries: Array<{ runId: number; seqs: number[] }>;
  consume: Array<{ messageId: number; runId: number; bySeq: number }>;
  /** Put consumed messages back on their queues (replay). */
  unconsume: number[];
  runs: RunPatch[];
  /** Requests carried out (or refused), with what happened as JSON. */
  requestsDone: Array<{ id: number; result: string }>;
  requests: Array<{ runId: number; kind: string; args: string }>;
  rejections: Array<Omit<RejectionRow, "id">>;
  /** Runs this batch writes for as their lease owner; a run owned by someone else aborts the batch with LeaseLostError. */
  leases: Array<{ runId: number; owner: string }>;
}

/** A batch that writes nothing yet, at `now`, to fill in. */
export function emptyBatch(now: number): WriteBatch {
  return {
    now,
    creates: [],
    messages: [],
    entries: [],
    deleteEntries: [],
    consume: [],
    unconsume: [],
    runs: [],
    requestsDone: [],
    requests: [],
    rejections: [],
    leases: [],
  };
}

export interface BatchResult {
  created: CreateResult[];
  messages: MessageResult[];
  /** Ids of the requests inserted, in order. */
  requests: number[];
}

export interface LoadedRun {
  run: RunRow;
  entries: EntryRow[];
  /** Unconsumed messages, oldest first. */
  messages: MessageRow[];
}

export interface RunQuery {
  workflow?: string;
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

/** The durable state of every run. Asynchronous and batch-shaped so a networked store fits too. */
export interface Store {
  readonly kind: "sqlite" | "postgres";
  /** Human-readable location (file path or URL without secrets). */
  readonly location: string;

  commit(batch: WriteBatch): Promise<BatchResult>;

  getRun(id: number): Promise<RunRow | undefined>;
  /** The runs with these ids, in one query (ids that name no run are left out; order unspecified). */
  getRuns(ids: number[]): Promise<RunRow[]>;
  findRun(workflow: string, key: string): Promise<RunRow | undefined>;
  loadRuns(ids: number[]): Promise<LoadedRun[]>;
  listRuns(query: RunQuery): Promise<RunRow[]>;
  countRuns(): Promise<RunCount[]>;
  /** Messages not consumed yet by runs not finished, counted by the workflow of their run and their queue (for metrics). */
  pendingMessageCounts(): Promise<Array<{ workflow: string; queue: string; count: number }>>;
  /**
   * Failed and retrying runs with a stored signature, grouped by it, most runs first (then the latest
   * failure first), at most `limit` groups; `total` counts the runs of every group in the window.
   */
  failureGroups(query: FailureGroupQuery): Promise<{ total: number; groups: FailureGroupRow[] }>;
  /** Runs that are not terminal, grouped by workflow and version (to refuse a start that lacks code). */
  liveVersions(): Promise<Array<{ workflow: string; version: number; count: number; keys: string[] }>>;

  /** The runs started by this run with ctx.child, oldest first. */
  childRuns(parentRunId: number): Promise<RunRow[]>;

  listEntries(runId: number, afterSeq: number, limit: number): Promise<EntryRow[]>;
  getEntry(runId: number, seq: number): Promise<EntryRow | undefined>;
  /** All entries of a run, in seq order. */
  allEntries(runId: number): Promise<EntryRow[]>;

  listMessages(runId: number, opts: { includeConsumed: boolean; limit: number }): Promise<MessageRow[]>;
  /** One message by id (of any run, consumed or not). */
  getMessage(id: number): Promise<MessageRow | undefined>;
  /** The message a run holds under an idempotency key, if any (consumed or not). */
  messageByKey(runId: number, idempotencyKey: string): Promise<MessageRow | undefined>;
  /** Messages refused for a run, newest first. */
  listRejections(runId: number, limit: number): Promise<RejectionRow[]>;
  /** Messages (of any run) with id above `afterId`, for noticing another process's sends. */
  messagesSince(afterId: number, limit: number): Promise<MessageRow[]>;
  maxMessageId(): Promise<number>;

  /**
   * Claims up to `limit` runs that are due (`wake_at <= now`) and not leased by a live owner
   * (other than `owner`; a run this owner claimed but lost track of expires and goes to another process): sets owner, lease_until and wake_at = leaseUntil, and (unless the run is finished)
   * status `running` with what it waited on cleared. Returns the claimed rows.
   */
  claimDue(
    now: number,
    owner: string,
    leaseUntil: number,
    limit: number,
    workflows: string[] | null,
  ): Promise<ClaimedRun[]>;
  /**
   * Extends the lease (and wake_at) of the given runs this owner holds; returns the ids renewed. A listed
   * run left out is no longer this owner's (another process took it over, or it ended): the caller must
   * stop executing it. A run the owner holds but no longer lists (a claim whose answer was lost) is left
   * to expire, so it gets claimed again.
   */
  renewLeases(owner: string, leaseUntil: number, runIds: number[]): Promise<number[]>;
  /** Owners currently holding runs, with their latest lease expiry. */
  owners(): Promise<Array<{ owner: string; leaseUntil: number }>>;
  /** Expires an owner's leases now (it is known dead), so its runs are claimable. */
  expireOwner(owner: string, now: number): Promise<number>;
  /** The earliest wake_at of any run, or null. */
  nextWakeAt(workflows: string[] | null): Promise<number | null>;

  /**
   * Cancels a run that is unowned, owned by `owner`, or whose lease expired: status cancelled, wake-up
   * cleared, unfinished entries marked cancelled, `reason` (JSON: who and when) stored as the run's error. False when it is finished or leased by someone else.
   */
  cancelRun(runId: number, now: number, owner: string, reason: string): Promise<boolean>;
  /** Claims one run for `owner` if it is unowned, already its own, or its lease expired. */
  claimRun(runId: number, owner: string, leaseUntil: number, now: number): Promise<boolean>;
  /** A request and what became of it (null result while pending). */
  getRequest(
    id: number,
  ): Promise<(RequestRow & { doneAt: number | null; result: string | null }) | undefined>;

  pendingRequests(runIds: number[] | null, limit: number): Promise<RequestRow[]>;

  /** Publishes workflow definitions (upsert by name and version). */
  registerWorkflows(meta: WorkflowMeta[]): Promise<void>;
  workflowMeta(): Promise<WorkflowMeta[]>;

  /** Every stored schedule, by name. */
  schedules(): Promise<ScheduleRow[]>;
  /**
   * Inserts the declared schedules that are missing, updates the workflow and spec of those present (next_due
   * too when the spec changed or it is null) and clears their orphaned flag; marks every other schedule orphaned.
   */
  syncSchedules(decls: ScheduleDecl[], now: number): Promise<void>;
  /**
   * Moves a schedule's next_due from `expected` to `next` if it still is `expected` (so one process fires each
   * firing), records the firing and commits `batch` (the run it starts) in the same transaction; the run the
   * batch creates becomes the schedule's last run. Null when the schedule had moved on (nothing written).
   */
  advanceSchedule(advance: ScheduleAdvance, batch: WriteBatch | null): Promise<BatchResult | null>;
  /** Pauses or resumes a schedule (resuming clears next_due, recomputed from then on); false when there is none. */
  setSchedulePaused(name: string, paused: boolean, now: number): Promise<boolean>;

  /** A number that changes whenever another connection commits (cheap; polled). */
  changeCounter(): Promise<number>;
  /**
   * Optional push for other processes' commits (e.g. PostgreSQL LISTEN/NOTIFY), so the engine reacts
   * at once instead of at its next poll. Returns the unsubscribe function.
   */
  onChange?(listener: () => void): () => void;
  close(): Promise<void>;
}
