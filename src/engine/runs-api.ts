// The run-facing API of the engine: look up, message, cancel, read and await runs.

import path from "node:path";
import type { z } from "zod";
import {
  InvalidInputError,
  NoCodeError,
  ResultTimeoutError,
  RunCancelledError,
  RunFailedError,
  RunFinishedError,
  RunNotFoundError,
  UnknownActionError,
} from "../errors.js";
import {
  type FailureGroupRow,
  type MessageRow,
  type RunRow,
  type RunStatus,
  type Store,
  TERMINAL_STATUSES,
} from "../storage/store.js";
import type { AnyWorkflow } from "../workflow.js";
import type {
  EntryDetail,
  FailureGroupsOptions,
  ListMessagesOptions,
  SendOptions,
  SendResult,
} from "./api.js";
import type { Clock } from "./clock.js";
import { type ConcurrencyInfo, concurrencyInfo } from "./concurrency.js";
import { checkDepth } from "./depth.js";
import type { ErrorInfo } from "./error-info.js";
import type { EventHub } from "./events.js";
import type { RunExecution } from "./execution.js";
import { type RunFamily, readFamily } from "./family.js";
import { RunHandle } from "./handle.js";
import { fromJson, toJson } from "./json.js";
import {
  type ListRunsOptions,
  listRuns,
  listWorkflows,
  type PublishedWorkflow,
  type RunPage,
  toTime,
  type WorkflowSummary,
} from "./listing.js";
import { checkOptions, checkText, describe, textProblem } from "./query-input.js";
import { QueueSchemas, validateMessage } from "./queues.js";
import type { ReplayOptions, ReplayPlan, ReplayRequest } from "./replay-types.js";
import { checkHandle, type RunRef, runIdOf } from "./run-ref.js";
import { entryDetail } from "./state-history.js";
import { checkTags, tagsByRun } from "./tags.js";
import { type HistoryEntry, type RunInfo, toHistoryEntry, toRunInfo } from "./views.js";
import {
  type RunEnd,
  type WatchCondition,
  type WatchOptions,
  type WatchResult,
  watchRun,
} from "./watch-run.js";
import type { WriteQueue } from "./write-queue.js";

/** Messages and reads of runs; the Engine adds execution on top. */
export abstract class RunsApi {
  abstract readonly clock: Clock;
  abstract readonly writes: WriteQueue;
  abstract readonly events: EventHub;
  abstract readonly active: Map<number, RunExecution>;
  /** See WatchSource.ending. */
  ending: RunEnd | null = null;
  abstract readonly loading: Map<number, MessageRow[]>;
  abstract readonly owner: string;
  abstract readonly closed: boolean;
  abstract assertOpen(): void;
  abstract poke(): void;
  abstract requireRun(workflow: string, key: string): Promise<RunRow>;
  abstract cancel(
    run: RunRef,
    options?: { by?: string; rollback?: boolean },
  ): Promise<RunStatus | "requested">;
  abstract replay(
    run: RunRef,
    options?: ReplayOptions & { waitMs?: number },
  ): Promise<ReplayPlan | ReplayRequest>;

  private readonly schemas: QueueSchemas;

  constructor(
    readonly store: Store,
    readonly defs: Map<string, Map<number, AnyWorkflow>>,
  ) {
    this.schemas = new QueueSchemas(store, defs);
  }

  handleFor(run: RunRow): RunHandle {
    return new RunHandle(this, run.id, run.workflow, run.key);
  }

  /** A handle on an existing run; throws RunNotFoundError when there is none. */
  async get(workflow: string, key: string): Promise<RunHandle> {
    this.assertOpen();
    return this.handleFor(await this.requireRun(workflow, key));
  }

  async runRow(id: number): Promise<RunRow> {
    this.assertOpen();
    const row = await this.store.getRun(id);
    if (!row) throw new RunNotFoundError(id);
    return row;
  }

  /** The stored record of the run with this workflow and key, or undefined; a name or key no run can have (a NUL in it) is refused. */
  findRun(workflow: string, key: string): Promise<RunRow | undefined> {
    return this.opened(() => {
      if (typeof workflow !== "string")
        throw new InvalidInputError(`Invalid workflow name ${describe(workflow)}: pass a workflow's name.`);
      if (typeof key !== "string")
        throw new InvalidInputError(`Invalid run key ${describe(key)}: pass the run's key (a string).`);
      checkText(workflow, "workflow name");
      checkText(key, "run key");
      return this.store.findRun(workflow, key);
    });
  }

  /** The stored records of these runs (by id) in one query; ids that name no run are left out. */
  getRuns(ids: number[]): Promise<RunRow[]> {
    return this.opened(() => {
      if (!Array.isArray(ids) || !ids.every((id) => Number.isSafeInteger(id) && id > 0))
        throw new InvalidInputError("engine.getRuns takes an array of run ids (whole numbers from 1).");
      return ids.length ? this.store.getRuns(ids) : Promise.resolve([]);
    });
  }

  /** The stored record of a run, or undefined when there is none. */
  getRun(ref: RunRef): Promise<RunRow | undefined> {
    return this.opened(async () => this.store.getRun(await this.idOf(ref, "engine.getRun")));
  }

  /** A run's messages, oldest first: those not yet read, or all with `includeConsumed`. */
  listMessages(ref: RunRef, options: ListMessagesOptions = {}): Promise<MessageRow[]> {
    return this.opened(async () => {
      checkOptions(options, { includeConsumed: "boolean", limit: "number" });
      return this.store.listMessages(await this.idOf(ref, "engine.listMessages"), {
        includeConsumed: options.includeConsumed ?? false,
        limit: Math.min(Math.max(Math.floor(options.limit ?? 100), 1), 10_000),
      });
    });
  }

  /** One message by id (of any run, read or not), or undefined. */
  getMessage(id: number): Promise<MessageRow | undefined> {
    return this.opened(() => this.store.getMessage(id));
  }

  /** Names of the workflows whose code this process has (none when attached). */
  registered(): string[] {
    return [...this.defs.keys()];
  }

  /** The database this engine uses: an absolute file path, ":memory:", or the URL without its password. */
  database(): string {
    const { kind, location } = this.store;
    return kind === "sqlite" && location !== ":memory:" ? path.resolve(location) : location;
  }

  /** `read()` once the engine is known open; a closed engine's error as a rejection, never a throw. */
  /** The run id `ref` names; a handle must name the same run here (its workflow and key), see run-ref.ts. */
  protected async idOf(ref: unknown, method: string): Promise<number> {
    this.assertOpen();
    const id = runIdOf(ref, method);
    if (ref instanceof RunHandle) checkHandle(ref, await this.store.getRun(id), method);
    return id;
  }

  protected opened<T>(read: () => Promise<T>): Promise<T> {
    try {
      this.assertOpen();
      return read();
    } catch (err) {
      return Promise.reject(err);
    }
  }

  definitionOf(run: RunRow): AnyWorkflow | undefined {
    return this.defs.get(run.workflow)?.get(run.version);
  }

  /** Workflows as published in the database by the processes that run them (name@version). */
  published(refresh = false): Promise<Map<string, PublishedWorkflow>> {
    return this.schemas.published(refresh);
  }

  /** The schema of a run's queue: from the code when this process has it, else as published. */
  queueSchema(run: RunRow, queue: string): Promise<z.ZodType> {
    return this.schemas.schema(run, queue);
  }

  /** Validates a message with the queue's schema, stores it durably, and wakes the run if it waits. */
  async send(ref: RunRef, queue: string, body: unknown, options: SendOptions = {}): Promise<SendResult> {
    this.assertOpen();
    const runId = await this.idOf(ref, "engine.send");
    const run = await this.runRow(runId);
    const label = `${run.workflow}/${run.key}`;
    // Before any lookup by it: the key is matched in the store.
    const idem = options.idempotencyKey;
    if (
      idem !== undefined &&
      (typeof idem !== "string" ||
        idem.length === 0 ||
        idem.length > 256 ||
        /[\u0000-\u001f]/.test(idem) ||
        textProblem(idem) !== null)
    ) {
      throw new InvalidInputError(
        `Invalid idempotency key ${describe(idem)}: use a non-empty string of at most 256 characters, well-formed Unicode without control characters.`,
      );
    }
    if (TERMINAL_STATUSES.includes(run.status)) {
      // A retried send whose message was stored (and perhaps read) before the run ended is a duplicate.
      const earlier = typeof idem === "string" ? await this.store.messageByKey(runId, idem) : undefined;
      if (earlier) return { messageId: earlier.id, duplicate: true };
      throw new RunFinishedError(label, run.status);
    }
    if (typeof queue !== "string" || queue.length === 0) {
      throw new InvalidInputError(
        `Invalid queue name ${describe(queue)}: pass the name of one of the workflow's queues.`,
      );
    }
    // Before the schema sees it: validation and the record of a refusal walk the body recursively.
    checkDepth(body, `The message for queue "${queue.slice(0, 200)}"`);
    const value = await validateMessage(
      { writes: this.writes, clock: this.clock, schemas: this.schemas },
      run,
      queue,
      body,
    );
    const json = toJson(value, `The message for queue "${queue}"`);
    const now = this.clock.now();
    const res = await this.writes.message({ runId, queue, body: json, idempotencyKey: idem ?? null, now });
    if (!res.duplicate) {
      const row: MessageRow = {
        id: res.id,
        runId,
        queue,
        body: json,
        sentAt: now,
        idempotencyKey: idem ?? null,
        consumedAt: null,
        consumedBy: null,
      };
      const exec = this.active.get(runId);
      if (exec) exec.deliver(row);
      else {
        // A run being loaded gets it once loaded (it may have read its messages already).
        this.loading.get(runId)?.push(row);
        this.poke();
      }
    }
    return { messageId: res.id, duplicate: res.duplicate };
  }

  /** Calls one of the workflow's actions with the run's committed state. */
  async action(ref: RunRef, name: string, args: unknown[] = []): Promise<unknown> {
    this.assertOpen();
    const runId = await this.idOf(ref, "engine.action");
    const run = await this.runRow(runId);
    const def = this.definitionOf(run);
    if (!def) {
      throw new NoCodeError(
        `This process has no code for workflow "${run.workflow}" version ${run.version}, so it cannot call its actions. Call it from the application that registers the workflow.`,
      );
    }
    const fn = (
      typeof name === "string" && Object.hasOwn(def.actions as object, name)
        ? (def.actions as Record<string, unknown>)[name]
        : undefined
    ) as ((c: unknown, ...a: unknown[]) => unknown) | undefined;
    if (typeof fn !== "function")
      throw new UnknownActionError(
        run.workflow,
        typeof name === "string" ? name : describe(name),
        Object.keys(def.actions),
      );
    for (const arg of args) checkDepth(arg, `The arguments of action "${name}"`);
    const exec = this.active.get(runId);
    const state = Object.freeze(JSON.parse(exec ? exec.stateJson : run.state) as object);
    return await fn(
      {
        state,
        key: run.key,
        workflow: run.workflow,
        status: run.status,
        send: (queue: string, body: unknown, options?: SendOptions) =>
          this.send(runId, queue, body, options).then(() => undefined),
      },
      ...args,
    );
  }

  async info(ref: RunRef): Promise<RunInfo> {
    this.assertOpen();
    const row = await this.runRow(await this.idOf(ref, "engine.info"));
    return toRunInfo(row, tagsByRun(await this.store.runTags([row.id])).get(row.id));
  }

  /** A run's concurrency limit: its key, whether it holds a slot or is queued, and behind which runs (null: no limit). */
  async concurrency(ref: RunRef): Promise<ConcurrencyInfo | null> {
    const row = await this.runRow(await this.idOf(ref, "engine.concurrency"));
    if (row.concurrencyKey === null) return null;
    const label = this.defs.get(row.workflow)?.get(row.version)?.concurrency?.label;
    return concurrencyInfo(row, await this.store.concurrencyQueue(row.id), label);
  }

  /** The run that started this one with ctx.child, and the runs it started, with their statuses. */
  async family(ref: RunRef): Promise<RunFamily> {
    const row = await this.runRow(await this.idOf(ref, "engine.family"));
    return readFamily(this.store, row.id, row.parentRunId);
  }

  /** A page of a run's history entries in the order they were first recorded. */
  async history(ref: RunRef, options: { after?: number; limit?: number } = {}): Promise<HistoryEntry[]> {
    this.assertOpen();
    const runId = await this.idOf(ref, "engine.history");
    checkOptions(options, { after: "seq", limit: "number" });
    if (options.limit !== undefined && !(Number.isInteger(options.limit) && options.limit >= 1)) {
      throw new InvalidInputError(
        `Invalid option limit: ${describe(options.limit)}; it must be a whole number of entries from 1 (at most 10,000 are returned).`,
      );
    }
    const limit = Math.min(Math.max(Math.floor(options.limit ?? 1000), 1), 10_000);
    const rows = await this.store.listEntries(runId, options.after ?? 0, limit);
    return rows.map(toHistoryEntry);
  }

  /**
   * One entry whole, by id (seq) or path, with the run's state before and after it.
   * State is rebuilt by reverting later entries' recorded changes from the current state.
   */
  async entry(which: RunRef, ref: number | string): Promise<EntryDetail> {
    this.assertOpen();
    const runId = await this.idOf(which, "engine.entry");
    if (!(typeof ref === "string" || Number.isInteger(ref))) {
      throw new InvalidInputError(
        `Invalid entry reference ${describe(ref)}: pass an entry id (a whole number) or its path, e.g. "notify[mail]/send".`,
      );
    }
    const run = await this.runRow(runId);
    return entryDetail(run, await this.store.allEntries(runId), ref);
  }

  /** Waits for the run to finish; resolves its output, or rejects with why it did not complete. */
  result(ref: RunRef, options: { timeout?: number } = {}): Promise<unknown> {
    let runId: number;
    try {
      this.assertOpen();
      runId = runIdOf(ref, "engine.result");
    } catch (err) {
      return Promise.reject(err);
    }
    const timeout = options?.timeout;
    if (timeout !== undefined && !(typeof timeout === "number" && Number.isFinite(timeout) && timeout >= 0)) {
      return Promise.reject(
        new InvalidInputError(
          `result({ timeout }) takes milliseconds as a number of 0 or more (e.g. { timeout: 30_000 }); got ${describe(timeout)}.`,
        ),
      );
    }
    // The watch starts now (its timeout counts from the call); a handle is checked on the watch's first read.
    const handle = ref instanceof RunHandle ? ref : null;
    const foreign = (row: RunRow) =>
      handle !== null && (row.workflow !== handle.workflow || row.key !== handle.key);
    // A run executing here (the handle's own) ends with a local event: no read is needed before it.
    const exec = this.active.get(runId);
    const executingHere =
      exec !== undefined &&
      (handle === null || (exec.workflow === handle.workflow && exec.key === handle.key));
    return this.watchRun(runId, (row) => foreign(row) || TERMINAL_STATUSES.includes(row.status), {
      ...(timeout !== undefined ? { timeout } : {}),
      endFields: true,
      executingHere,
    }).then(
      ({ reason, run }) => {
        if (handle) checkHandle(handle, run, "engine.result");
        const label = `${run.workflow}/${run.key}`;
        if (reason !== "until") throw new ResultTimeoutError(label, timeout!, run.status);
        if (run.status === "completed") return fromJson(run.output);
        if (run.status === "cancelled") throw new RunCancelledError(label);
        throw new RunFailedError(label, fromJson<ErrorInfo>(run.error) ?? null);
      },
      (err) => {
        if (handle && err instanceof RunNotFoundError) checkHandle(handle, undefined, "engine.result");
        throw err;
      },
    );
  }

  /**
   * Waits until `until(run)` returns something truthy (looked at on every change of the run, here or in
   * another process), for at most `timeout` ms of the engine's clock; see watch-run.ts.
   */
  watchRun<T>(runId: number, until: WatchCondition<T>, options: WatchOptions = {}): Promise<WatchResult<T>> {
    try {
      this.assertOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    return watchRun(this, runId, until, options);
  }

  /** Runs newest first, filtered, a page at a time. */
  listRuns(options: ListRunsOptions = {}): Promise<RunPage> {
    try {
      this.assertOpen();
    } catch (err) {
      return Promise.reject(err);
    }
    return listRuns(this.store, options);
  }

  /**
   * Failed and retrying runs grouped by their stored failure signature, most runs first: a grouped query
   * over an index, complete at any scale. `total` counts every failing run in the window.
   */
  async failureGroups(options: FailureGroupsOptions): Promise<{ total: number; groups: FailureGroupRow[] }> {
    this.assertOpen();
    checkOptions(options, { since: "time", workflow: "string", signature: "string", limit: "number" });
    const tags = options.tags === undefined ? undefined : checkTags(options.tags, "option tags", true);
    const since = toTime(options.since);
    if (since === undefined)
      throw new InvalidInputError("failureGroups takes { since }: the start of the window in milliseconds.");
    const limit = Math.min(Math.max(Math.floor(options.limit ?? 20), 1), 1000);
    return this.store.failureGroups({
      since,
      limit,
      ...(options.workflow !== undefined ? { workflow: options.workflow } : {}),
      ...(options.signature !== undefined ? { signature: options.signature } : {}),
      ...(tags && Object.keys(tags).length ? { tags } : {}),
    });
  }

  /** Workflows (registered here or published by other processes) with versions and run counts by status. */
  async listWorkflows(): Promise<WorkflowSummary[]> {
    this.assertOpen();
    return listWorkflows(this.store, this.defs, [...(await this.published(true)).values()]);
  }
}
