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
// - A run's tags are unique by name and live as long as the run; a tag filter is a range read of the
//   (name, value, created_at, run_id) index, newest first, so a filtered page costs the same at any size.

import type { BatchResult, WriteBatch } from "./batch.js";
import type { PackedSteps } from "./packed-steps.js";
import type {
  AuditAppend,
  AuditFilter,
  AuditQuery,
  AuditRow,
  ClaimedRun,
  ConcurrencyQueue,
  EntryRow,
  FailureGroupQuery,
  FailureGroupRow,
  MessageRow,
  PlanOutcome,
  PlanRow,
  PlanRunRow,
  PrunedCount,
  RejectionRow,
  RequestRow,
  RetentionRule,
  RunCount,
  RunQuery,
  RunRow,
  ScheduleAdvance,
  ScheduleDecl,
  ScheduleRow,
  TagRow,
  WorkflowMeta,
} from "./rows.js";

export * from "./batch.js";
export * from "./rows.js";

/** A run as loadRuns answers it, for execution. */
export interface LoadedRun {
  run: RunRow;
  /**
   * The run's entries in seq order, for replay: a completed step is a ReplayEntry (no times, input, error
   * or attempts; Store.getEntry has them), every other entry the whole row.
   */
  entries: EntryRow[];
  /** Unconsumed messages, oldest first. */
  messages: MessageRow[];
  /**
   * Asked for with `{ packed: true }`, and only where the store packs: the root's leading plain completed
   * steps (ordinals 0..count-1), then left out of `entries`.
   */
  packed?: PackedSteps;
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
  /**
   * The completed run of this workflow and version that finished last (ties: the higher id), other than
   * `exceptRunId`: one probe of an index, whatever the number of runs.
   */
  latestCompletedRun(workflow: string, version: number, exceptRunId: number): Promise<RunRow | undefined>;
  /**
   * The runs with these ids, their entries and unconsumed messages, for execution. With `packed`, a store may
   * answer a run's leading plain completed steps as LoadedRun.packed instead of entry objects (SQLite does).
   */
  loadRuns(ids: number[], options?: { packed?: boolean }): Promise<LoadedRun[]>;
  listRuns(query: RunQuery): Promise<RunRow[]>;
  countRuns(): Promise<RunCount[]>;
  /** The tags of these runs, by run id then name (runs without tags, or no such run, have no rows). */
  runTags(runIds: number[]): Promise<TagRow[]>;
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
   * IMPORTANT (concurrency limits): a run with a concurrency limit that does not hold a slot yet (not running,
   * retrying or finished) is claimed only while the runs of its workflow and key in running/retrying, plus
   * the older ones queued for a slot, are fewer than its limit; the count and the claim are atomic across
   * processes. A run refused is left unclaimed, queued (queued_at) and not due until a slot frees: a run
   * leaving running/retrying (any commit, cancelRun) makes the oldest queued runs of its key due at once.
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
  /** What a run of a limited workflow waits behind (its key's slot holders and older queued runs), else null. */
  concurrencyQueue(runId: number): Promise<ConcurrencyQueue | null>;
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

  /** Requests not done yet, oldest first: of these runs (all of theirs), or with null any run's (at most `limit`). */
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

  /**
   * Appends one write to the audit; returns its id. IMPORTANT: the audit is append-only: the Store has no
   * method that changes or removes a row (the tables refuse UPDATE and DELETE too), and pruning runs keeps it.
   */
  appendAudit(row: AuditAppend): Promise<number>;
  /** Audit rows matching the filter, newest first (id descending), at most `limit`. */
  listAudit(query: AuditQuery): Promise<AuditRow[]>;
  /** How many audit rows match the filter. */
  countAudit(filter: AuditFilter): Promise<number>;
  /**
   * The runs `pruneRuns` would delete now under these rules, counted by workflow and status (a dry run).
   * IMPORTANT: a run is never expired while its parent is unfinished (it may still read its child) or while it
   * has a pending request (someone asked to replay or cancel it).
   */
  countExpired(rules: RetentionRule[]): Promise<PrunedCount[]>;
  /**
   * Deletes at most `limit` expired runs (oldest finished first, rule by rule) in one transaction, with every
   * row of theirs (entries, messages, requests, refusals); their children's parent link and a schedule's
   * last run that named them become null. Returns what it deleted. SQLite then returns free pages to the
   * file system beyond a slack kept for reuse (incremental vacuum).
   */
  pruneRuns(rules: RetentionRule[], limit: number): Promise<PrunedCount[]>;
  /** Per rule (in order), the earliest finished_at at or after its finishedBefore: its next run to expire, or null. */
  nextToExpire(rules: RetentionRule[]): Promise<Array<number | null>>;
  /** Stores a bulk plan and the runs it pins, in this order (positions 1..n), in one transaction. */
  createPlan(plan: PlanRow, runIds: number[]): Promise<void>;
  getPlan(token: string): Promise<PlanRow | undefined>;
  /** A plan's runs with position above `after`, in order; only those without an outcome when `pendingOnly`. */
  planRuns(
    token: string,
    options: { after: number; limit: number; pendingOnly: boolean },
  ): Promise<PlanRunRow[]>;
  /**
   * Records what became of plan runs. IMPORTANT: an outcome is written once: a run that already has one
   * keeps it (two processes carrying on one plan cannot count a run twice). Returns the runs recorded now.
   */
  recordPlanOutcomes(token: string, outcomes: PlanOutcome[], now: number): Promise<number[]>;
  /** How many runs of a plan have each outcome (null: pending). */
  planProgress(token: string): Promise<Array<{ outcome: string | null; count: number }>>;

  /** A number that changes whenever another connection commits (cheap; polled). */
  changeCounter(): Promise<number>;
  /**
   * Optional push for other processes' commits (e.g. PostgreSQL LISTEN/NOTIFY), so the engine reacts
   * at once instead of at its next poll. Returns the unsubscribe function.
   */
  onChange?(listener: () => void): () => void;
  close(): Promise<void>;
}
