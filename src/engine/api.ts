// The engine as applications, the MCP layer and the inspector see it: runs, their history, messages,
// replay, cancel, events. The machinery behind it (scheduler, leases, change watching, the write queue)
// is not part of it; Engine (engine.ts) implements it.

import type { NoComparison, RunComparison } from "../diagnosis/compare-types.js";
import type { DiagnoseOptions, Diagnosis, FailureList } from "../diagnosis/types.js";
import type { WaymarkMetrics } from "../observability/metrics.js";
import type { FailureGroupRow, MessageRow, RunRow, RunStatus } from "../storage/store.js";
import type { InputOf, WorkflowEntry } from "../workflow.js";
import type { AuditControl } from "./audit-types.js";
import type { BulkControl } from "./bulk-types.js";
import type { Clock } from "./clock.js";
import type { ConcurrencyInfo } from "./concurrency.js";
import type { EngineEvent } from "./events.js";
import type { RunFamily } from "./family.js";
import type { RunHandle } from "./handle.js";
import type { ListRunsOptions, PublishedWorkflow, RunPage, WorkflowSummary } from "./listing.js";
import type { ReplayOptions, ReplayPlan, ReplayRequest } from "./replay-types.js";
import type { PruneOptions, PruneResult } from "./retention.js";
import type { RunRef } from "./run-ref.js";
import type { ScheduleControl } from "./schedule-types.js";
import type { HistoryEntry, RunInfo } from "./views.js";
import type { WatchCondition, WatchOptions, WatchResult } from "./watch-run.js";

export interface SendOptions {
  /** Sending twice with one key stores the message once. */
  idempotencyKey?: string;
}

export interface SendResult {
  messageId: number;
  /** The idempotency key had been used: nothing new was stored. */
  duplicate: boolean;
}

/** Failed and retrying runs grouped by failure signature (see failure-signature.ts). */
export interface FailureGroupsOptions {
  /** Failures at or after this time (ms). */
  since: number;
  workflow?: string;
  signature?: string;
  /** Only runs holding every one of these tags (exact values). */
  tags?: Record<string, string>;
  /** Most groups returned (default 20, at most 1,000). */
  limit?: number;
}

/** Options of listFailures: the window (default the last 7 days), a workflow, a signature, a count. */
export interface ListFailuresOptions {
  since?: number;
  workflow?: string;
  signature?: string;
  /** Only runs holding every one of these tags (exact values): "what fails for customer c-9?". */
  tags?: Record<string, string>;
  limit?: number;
}

/** One entry with the run's state before and after it. */
export interface EntryDetail extends HistoryEntry {
  stateBefore: unknown;
  stateAfter: unknown;
}

/** What the read methods of runs take: consumed messages too, and at most how many (default 100). */
export interface ListMessagesOptions {
  includeConsumed?: boolean;
  limit?: number;
}

/** Options of getOrCreate: tags stored with the run when this call creates it (see tags.ts for the limits). */
export interface CreateOptions {
  /** Names to exact values to find the run by (list_runs, list_failures); a run that exists keeps its own. */
  tags?: Record<string, string>;
}

/**
 * Arguments after the key of getOrCreate: the input (optional when the workflow's input may be undefined),
 * then the options.
 */
type InputArgs<E> =
  undefined extends InputOf<E>
    ? [input?: InputOf<E>, options?: CreateOptions]
    : [input: InputOf<E>, options?: CreateOptions];

/**
 * A Waymark engine, typed by its registry's workflows `U` (names, inputs, states and queues flow into
 * handles). What `setup({ use }).start()` and `attach()` return.
 */
export interface WaymarkEngine<U extends Record<string, WorkflowEntry> = Record<string, WorkflowEntry>> {
  /** The engine's clock (a FakeClock in tests); every timeout and time it reports is on it. */
  readonly clock: Clock;
  /** True once close() began. */
  readonly closed: boolean;
  /** This engine's metrics (Prometheus text by `scrape()`; also through @opentelemetry/api metrics). */
  readonly metrics: WaymarkMetrics;
  /** The schedules of setup({ schedules }) in the database: list them, pause and resume one. */
  readonly schedules: ScheduleControl;
  /** The audit of every write made through MCP, the inspector and the CLI: record one, list them (append-only). */
  readonly audit: AuditControl;
  /** Replay or cancel many runs: a dry run pins them in a plan, a real call acts on that plan (bulk.ts). */
  readonly bulk: BulkControl;

  /** Gets a run by key, creating it (and starting it, with `options.tags`) if it does not exist. */
  getOrCreate<N extends keyof U & string>(
    workflow: N,
    key: string,
    ...input: InputArgs<U[N]>
  ): Promise<RunHandle<U[N]>>;
  /** A handle on an existing run; throws RunNotFoundError when there is none. */
  get<N extends keyof U & string>(workflow: N, key: string): Promise<RunHandle<U[N]>>;
  /** The stored record of the run with this workflow and key, or undefined. */
  findRun(workflow: string, key: string): Promise<RunRow | undefined>;
  /** The stored record of a run, or undefined when there is none. */
  getRun(run: RunRef): Promise<RunRow | undefined>;
  /** The stored records of these runs (by id) in one query; ids that name no run are left out. */
  getRuns(ids: number[]): Promise<RunRow[]>;
  /** Everything known about a run: status, state, what it waits on, error, times. */
  info(run: RunRef): Promise<RunInfo>;
  /** The run that started this one with ctx.child, and the runs it started, with their statuses. */
  family(run: RunRef): Promise<RunFamily>;
  /** Its concurrency limit: key value, slot held or queued, and the runs it is queued behind; null without a limit. */
  concurrency(run: RunRef): Promise<ConcurrencyInfo | null>;
  /** Runs newest first, filtered, a page at a time. */
  listRuns(options?: ListRunsOptions): Promise<RunPage>;

  /** A page of a run's history entries in the order they were first recorded. */
  history(run: RunRef, options?: { after?: number; limit?: number }): Promise<HistoryEntry[]>;
  /** One entry whole, by id (seq) or path, with the run's state before and after it. */
  entry(run: RunRef, ref: number | string): Promise<EntryDetail>;
  /** A run's messages, oldest first: those not yet read, or all with `includeConsumed`. */
  listMessages(run: RunRef, options?: ListMessagesOptions): Promise<MessageRow[]>;
  /** One message by id (of any run, read or not), or undefined. */
  getMessage(id: number): Promise<MessageRow | undefined>;

  /** Validates a message with the queue's schema, stores it durably, and wakes the run if it waits. */
  send(run: RunRef, queue: string, body: unknown, options?: SendOptions): Promise<SendResult>;
  /** Calls one of the workflow's actions with the run's committed state. */
  action(run: RunRef, name: string, args?: unknown[]): Promise<unknown>;
  /** Waits for the run to finish; resolves its output, or rejects with why it did not complete. */
  result(run: RunRef, options?: { timeout?: number }): Promise<unknown>;
  /** Waits until `until(run)` is truthy, on every change of the run, for at most `timeout` ms of the clock. */
  watchRun<T>(runId: number, until: WatchCondition<T>, options?: WatchOptions): Promise<WatchResult<T>>;
  /**
   * Cancels a run; "requested" when another process executes it and was asked to. With `rollback: true` the
   * handlers of its completed steps run first: "rolling-back" while they do (or "requested"), then cancelled.
   */
  cancel(run: RunRef, options?: { by?: string; rollback?: boolean }): Promise<RunStatus | "requested">;
  /** Replays a run after a fix (see replay.ts), or stores the request for the process that runs it. */
  replay(run: RunRef, options?: ReplayOptions & { waitMs?: number }): Promise<ReplayPlan | ReplayRequest>;

  /**
   * Deletes finished runs older than `olderThan` with all their rows (dryRun: counts them), whatever their
   * workflows' retention; runs of unfinished parents and with pending requests are kept. `waymark prune`.
   */
  prune(options: PruneOptions): Promise<PruneResult>;

  /** Why a run failed or is stuck, and the next actions (see diagnosis/). */
  diagnose(run: RunRef | { workflow: string; key: string }, options?: DiagnoseOptions): Promise<Diagnosis>;
  /**
   * A run against another: where their histories first differ, input and state differences as JSON
   * Pointers, the outputs of the steps both ran that differ, timing outliers, code versions. Without
   * `other`, the latest completed run of the same workflow and version (a NoComparison when there is none).
   */
  compareRuns(
    run: RunRef | { workflow: string; key: string },
    other?: RunRef | { workflow: string; key: string },
  ): Promise<RunComparison | NoComparison>;
  /** Failed and retrying runs grouped by signature, described by their newest runs. */
  listFailures(options?: ListFailuresOptions): Promise<FailureList>;
  /** Failed and retrying runs grouped by stored failure signature, most runs first. */
  failureGroups(options: FailureGroupsOptions): Promise<{ total: number; groups: FailureGroupRow[] }>;

  /** Workflows (registered here or published by other processes) with versions and run counts by status. */
  listWorkflows(): Promise<WorkflowSummary[]>;
  /** Workflows as published in the database by the processes that run them, by "name@version". */
  published(refresh?: boolean): Promise<Map<string, PublishedWorkflow>>;
  /** Names of the workflows whose code this process has (none when attached). */
  registered(): string[];
  /** The database this engine uses, as a person finds it: an absolute file path, ":memory:", or the URL without its password. */
  database(): string;

  /** Subscribes to run, entry and broadcast events; returns the unsubscribe function. */
  on(listener: (event: EngineEvent) => void): () => void;
  /**
   * One pass of the scheduler: releases due waits, claims due runs (tests call it after moving a FakeClock).
   * The event loop turns first, so what the previous pass began commits before this one looks.
   */
  tick(): Promise<void>;
  /** Stops the loops, waits for pending writes and hands this process's runs back to the database. */
  close(): Promise<void>;
}
