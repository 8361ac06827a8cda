// One executing run: its history index, its waits, its writes, and how it suspends and finishes.
//
// IMPORTANT invariants:
// - Replay matches each call to history by (scope, ordinal) and checks name and kind; any mismatch
//   fails the run with HistoryDivergedError (sticky: every later call rethrows it).
// - A run with no step in flight and every code path blocked on a wait is suspended: its waits are
//   recorded, its wake-up stored, its lease released, and this object dropped. It resumes by replay.
// - Once `dead`, nothing this object does reaches the store.

import {
  DuplicateEntryError,
  FatalError,
  HistoryDivergedError,
  InvalidNameError,
  RunCancelledError,
} from "../errors.js";
import { storedSignature } from "../failure-signature.js";
import { RunTrace, tracingEnabled } from "../observability/tracing.js";
import { RollbackFailedError } from "../rollback-errors.js";
import type { PackedSteps } from "../storage/packed-steps.js";
import type { EntryRow, MessageRow, RunRow } from "../storage/store.js";
import type { AnyWorkflow, WorkflowContext } from "../workflow.js";
import { cancelEntries } from "./branches.js";
import type { EngineCore, Wait } from "./core.js";
import {
  type Attempt,
  blankEntry,
  type Entry,
  type EntryKind,
  type EntryOf,
  type EntryStatus,
  entryPath,
} from "./entries.js";
import { type ErrorInfo, errorInfo } from "./error-info.js";
import { ignore, rejected } from "./handled.js";
import { HistoryIndex, NOT_REPLAYED, nameProblem, Scope } from "./history.js";
import { Inbox } from "./inbox.js";
import { fromJson, toJson } from "./json.js";
import { Rollbacks } from "./rollback.js";
import { Abandoned, isInternal, ScopeCancelled } from "./signals.js";
import { waitRecord } from "./suspension.js";
import type { VerifyObserver } from "./verify-observer.js";

export type { VerifyObserver } from "./verify-observer.js";

/** Builds the `ctx` a workflow's code receives for one scope (context.ts; the engine supplies it). */
export type ContextFactory = (exec: RunExecution, scope: Scope) => WorkflowContext;

/** The cause of a rollback as recorded with the run (its error), rebuilt as an Error for the handlers. */
function undoCauseOf(json: string | null): { error: Error; json: string; cancel: boolean } {
  const info = fromJson<ErrorInfo>(json) ?? { name: "Error", message: "The run failed." };
  const error = Object.assign(new Error(info.message), { code: info.code, details: info.details });
  error.name = info.name;
  return { error, json: json ?? JSON.stringify(info), cancel: info.code === "RUN_CANCELLED" };
}

export class RunExecution {
  readonly id: number;
  readonly workflow: string;
  readonly key: string;
  readonly version: number;
  readonly label: string;
  readonly history: HistoryIndex;
  readonly root: Scope;
  state: object;
  /** The state as last committed. */
  stateJson: string;
  /** The run's committed tags, read by the first step that sets one (step-tags.ts); null until then. */
  tags: Record<string, string> | null = null;
  stateSeq: number;
  private nextSeq: number;
  private readonly inbox = new Inbox();
  readonly waits = new Set<Wait>();
  /** Steps in flight and writes being awaited: while > 0 the run is not idle. */
  active = 0;
  dead = false;
  /** A sticky failure (code drift): every later call throws it, and the run fails with it. */
  fatal: Error | null = null;
  readonly controllers = new Set<AbortController>();
  private idleCheckQueued = false;
  /** This execution's spans (observability/tracing.ts); null in verify mode. */
  trace: RunTrace | null = null;
  private readonly traceContext: string | null;
  /** The steps that carry rollback handlers, and undoing them (rollback.ts). */
  readonly rollbacks: Rollbacks;
  /**
   * Undo mode: why the run rolls back (its error as recorded, and whether a cancel asked for it). Set when the
   * run fails with steps to undo, on a cancel with rollback, or when a run is loaded rolling-back: then its
   * code only replays (to learn the handlers) and the first new call starts the undo.
   */
  private undoCause: { error: Error; json: string; cancel: boolean } | null = null;
  private undoing = false;

  constructor(
    readonly core: EngineCore,
    readonly def: AnyWorkflow,
    run: RunRow,
    entries: EntryRow[],
    messages: MessageRow[],
    private readonly makeContext: ContextFactory,
    /**
     * Verify mode (a replay's or a deploy's check, replay-check.ts) when given: the code replays recorded
     * entries only; anything new stops at the frontier (a promise that never settles) and nothing is written.
     */
    readonly verifier: VerifyObserver | null = null,
    /** The root's leading steps as the store packed them (LoadedRun.packed), or null. */
    packed: PackedSteps | null = null,
  ) {
    this.id = run.id;
    this.workflow = run.workflow;
    this.key = run.key;
    this.version = run.version;
    this.label = `${run.workflow}/${run.key}`;
    this.history = new HistoryIndex(entries, packed);
    this.nextSeq = this.history.maxSeq + 1;
    this.stateSeq = this.history.maxStateSeq;
    this.stateJson = run.state;
    this.state = JSON.parse(run.state) as object;
    this.root = new Scope("", this.history.scope(""), null, packed);
    verifier?.opened(this.root);
    this.rollbacks = new Rollbacks(this);
    if (run.status === "rolling-back" && !verifier) this.undoCause = undoCauseOf(run.error);
    for (const m of messages) this.enqueueMessage(m);
    this.input = fromJson(run.input);
    this.traceContext = run.traceContext;
  }

  private readonly input: unknown;

  /** True in verify mode: nothing new runs and nothing is written. */
  get verifying(): boolean {
    return this.verifier !== null;
  }

  /** True when nothing new may run: verify mode, or rolling back (the code replays only). */
  get holding(): boolean {
    return this.verifier !== null || this.undoCause !== null;
  }

  /** True while the run undoes its completed steps. */
  get rollingBack(): boolean {
    return this.undoing;
  }

  /** Opens a nested scope (a branch, a loop iteration) over the entries history holds for it. */
  openScope(path: string, parent: Scope): Scope {
    const scope = new Scope(path, this.history.scope(path), parent);
    this.verifier?.opened(scope);
    return scope;
  }

  /** The `ctx` for code running in `scope`, built by the factory the engine gave this execution. */
  contextFor(scope: Scope): WorkflowContext {
    return this.makeContext(this, scope);
  }

  /** Starts (or resumes, by replay) the workflow function. */
  start(): void {
    const ctx = this.contextFor(this.root);
    if (!this.verifying && tracingEnabled()) {
      this.trace = new RunTrace(this, this.traceContext, this.core.owner, this.core.clock.now());
      // A run stored before it had a trace context (or created without a tracer) keeps this one from now on.
      if (this.trace.adopted)
        this.core.writes.patch({ id: this.id, traceContext: this.trace.adopted }, this.core.owner);
    }
    let result: Promise<unknown>;
    try {
      const trace = this.trace;
      result = Promise.resolve(
        trace ? trace.run(() => this.def.run(ctx, this.input)) : this.def.run(ctx, this.input),
      );
    } catch (err) {
      result = Promise.reject(err);
    }
    result.then(
      (output) => this.finish(output),
      (err) => this.fail(err),
    );
  }

  // ---- history slots -------------------------------------------------------------------------

  /** The step whose function is being called right now (its synchronous part), if any. */
  callingStep: string | null = null;

  /** Throws if this execution may not go on (stopped, diverged, its scope cancelled, or called from a step). */
  check(scope: Scope): void {
    if (this.callingStep !== null) {
      const misuse = new FatalError(
        `Run "${this.label}": ctx was used inside step "${this.callingStep}". A step is one recorded unit: it cannot open steps, sleeps or waits of its own. Call ctx.step, ctx.sleep and ctx.queue.next from the workflow's code, between steps; inside a step use its argument (step.state, step.signal).`,
      );
      // Sticky: a step that does not await the call (its promise is dropped) must not let the run succeed.
      this.fatal ??= misuse;
      throw misuse;
    }
    if (this.dead) throw new Abandoned();
    if (this.fatal) throw this.fatal;
    if (scope.cancelled) throw new ScopeCancelled(scope.path);
  }

  /**
   * Throws if this execution stopped (cancelled, suspended, evicted, its lease lost, the engine closed) or
   * `scope` was cancelled (a lost race, a failed join). Called when user code resumes after an await it
   * does not control (a step's function returning): what it did then must not be recorded.
   */
  assertLive(scope: Scope): void {
    if (this.dead) throw new Abandoned();
    if (scope.cancelled) throw new ScopeCancelled(scope.path);
  }

  /** Claims the next position in `scope` for a call; returns the recorded entry there (of that kind), if any. */
  slot<K extends EntryKind>(
    scope: Scope,
    name: string,
    kind: K,
  ): { ordinal: number; recorded: EntryOf<K> | undefined } {
    this.check(scope);
    const ordinal = scope.next;
    const recorded = scope.entry(ordinal);
    // A name equal to the one recorded here passed this check when it was recorded.
    if (recorded?.name !== name) {
      const problem = nameProblem(name);
      if (problem) throw new InvalidNameError(kind, name, problem);
    }
    if (!scope.useName(name, ordinal))
      throw new DuplicateEntryError(this.label, entryPath(scope.path, name), kind);
    scope.next++;
    if (recorded && (recorded.name !== name || recorded.kind !== kind)) {
      this.diverge(scope, ordinal, recorded, { kind, name });
    }
    if (recorded) this.verifier?.progressed();
    return { ordinal, recorded: recorded as EntryOf<K> | undefined };
  }

  /**
   * slot() for a step call that replays a completed step recorded at the scope's next ordinal under its name
   * (most calls of a long replay): takes the position and returns its output JSON text (null: none), with no
   * object of its own (a packed step stays packed). Anything else returns NOT_REPLAYED, changing nothing.
   */
  replayedStep(scope: Scope, name: string): string | null | typeof NOT_REPLAYED {
    const ordinal = scope.next;
    if (ordinal >= scope.loaded) return NOT_REPLAYED;
    const recorded = scope.entries[ordinal];
    const packed = recorded === undefined ? scope.packed : null;
    if ((packed ? packed.name(ordinal) : recorded?.name) !== name) return NOT_REPLAYED;
    if (recorded && (recorded.kind !== "step" || recorded.status !== "completed")) return NOT_REPLAYED;
    this.check(scope);
    if (!scope.useRecordedName(name, ordinal)) return NOT_REPLAYED;
    scope.next++;
    this.verifier?.progressed();
    return packed ? packed.output(ordinal) : recorded!.output;
  }

  /** Records a divergence, making it sticky, and throws it. */
  diverge(
    scope: Scope,
    ordinal: number,
    recorded: Entry | undefined,
    requested: { kind: EntryKind; name: string; shape?: string } | null,
    recordedShape?: string,
  ): never {
    const err = new HistoryDivergedError(
      this.label,
      scope.path,
      ordinal,
      recorded
        ? { kind: recorded.kind, name: recorded.name, ...(recordedShape ? { shape: recordedShape } : {}) }
        : null,
      requested,
      recorded ? entryPath(recorded.scope, recorded.name) : null,
    );
    this.fatal = err;
    this.verifier?.progressed();
    throw err;
  }

  /** A fresh entry for a new call. */
  newEntry<K extends EntryKind>(
    scope: Scope,
    ordinal: number,
    name: string,
    kind: K,
    status: EntryStatus,
  ): EntryOf<K> {
    const row = blankEntry(
      this.id,
      this.nextSeq++,
      scope.path,
      ordinal,
      name,
      kind,
      status,
      this.core.clock.now(),
    );
    scope.entries[ordinal] = row as Entry;
    return row;
  }

  // ---- writes --------------------------------------------------------------------------------

  /** Queues an entry write (not awaited). */
  write(row: EntryRow): void {
    if (!this.dead && !this.verifying) this.core.writes.entry(row, this.core.owner);
  }

  /** Queues the run's state as last committed by a step (not awaited: it goes with the step's record). */
  writeState(): void {
    if (!this.dead && !this.verifying)
      this.core.writes.patch({ id: this.id, state: this.stateJson }, this.core.owner);
  }

  /** Queues a start marker: written (with `attempts` serialised) only if the entry is still unfinished a turn later. */
  mark(row: EntryRow, attempts?: readonly Attempt[]): void {
    if (!this.dead && !this.verifying) this.core.writes.marker(row, this.core.owner, attempts);
  }

  /** Verify mode or undo mode: where new work would begin; never settles (undo mode starts the undo). */
  frontier(): Promise<never> {
    // A turn later: code in sibling branches replays its recorded steps (and so its handlers) first.
    if (this.undoCause && !this.verifying) setImmediate(() => this.undo());
    return new Promise<never>(() => {});
  }

  /** Waits until everything this run wrote is committed; throws Abandoned if it stopped meanwhile. */
  persist(): Promise<void> {
    if (this.verifying) return Promise.resolve();
    this.active++;
    // The flush never rejects (it resolves with the runs whose writes were dropped): one shared continuation.
    return this.core.writes.flush().then(this.persisted);
  }

  private readonly persisted = (failed: ReadonlySet<number>): void => {
    this.active--;
    if (failed.has(this.id)) this.stop();
    if (this.dead) throw new Abandoned();
    this.maybeIdle();
  };

  /** Records an entry's change and emits it once durable. */
  async commitEntry(row: EntryRow): Promise<void> {
    if (this.verifying) return;
    this.write(row);
    await this.persist();
    this.core.emitEntry(this, row);
  }

  /**
   * A completed step's record (its attempt counted in `active`): commits it, emits it, then resolves with
   * `value`, in one continuation of the flush (commitEntry awaited by an async step took three). The promise
   * is marked handled (see handled.ts) only when it is about to reject: a recorded step costs no handler.
   */
  commitStep<T>(row: EntryRow, value: T): Promise<T> {
    if (this.verifying) {
      this.active--;
      this.maybeIdle();
      return Promise.resolve(value);
    }
    try {
      this.write(row);
    } catch (err) {
      this.active--;
      return rejected(err);
    }
    this.active++;
    const recorded: Promise<T> = this.core.writes.flush().then((failed) => {
      this.active--;
      if (failed.has(this.id)) this.stop();
      try {
        if (this.dead) throw new Abandoned();
        this.core.emitEntry(this, row);
      } catch (err) {
        this.active--;
        recorded.catch(ignore);
        throw err;
      }
      this.active--;
      this.maybeIdle();
      return value;
    });
    return recorded;
  }

  // ---- messages ------------------------------------------------------------------------------

  /** Queues a message for this run unless already seen; false when it was. */
  enqueueMessage(m: MessageRow): boolean {
    return this.inbox.add(m);
  }

  /** A message arrived for this run: queue it and wake one wait on its queue. */
  deliver(m: MessageRow): void {
    if (this.dead || !this.enqueueMessage(m)) return;
    for (const w of this.waits) {
      if (w.kind === "queue" && w.queues?.includes(m.queue)) {
        this.release(w);
        w.resolve();
        return;
      }
    }
  }

  /** The oldest queued message on any of `queues`, taken off its queue. */
  takeMessage(queues: readonly string[]): MessageRow | undefined {
    return this.inbox.take(queues);
  }

  // ---- waits and suspension ------------------------------------------------------------------

  /** Blocks a code path until the wait is released (by time or message); may suspend the run. */
  wait(w: Omit<Wait, "resolve" | "reject" | "exec">): Promise<void> {
    this.check(w.scope);
    if (this.holding) return this.frontier();
    return new Promise<void>((resolve, reject) => {
      const full: Wait = { ...w, exec: this, resolve, reject };
      this.waits.add(full);
      if (full.deadline !== null) this.core.watch(full);
      if (full.child) this.core.childRuns.watch(full);
      this.maybeIdle();
    });
  }

  release(w: Wait): void {
    this.waits.delete(w);
    if (w.deadline !== null) this.core.unwatch(w);
    if (w.child) this.core.childRuns.unwatch(w);
  }

  /** Drops the waits of a cancelled scope. */
  dropWaits(scope: Scope): void {
    for (const w of [...this.waits]) {
      if (w.scope.isWithin(scope)) {
        this.release(w);
        w.reject(new ScopeCancelled(w.scope.path));
      }
    }
  }

  maybeIdle(): void {
    if (this.idleCheckQueued || this.dead) return;
    if (this.active > 0 || this.waits.size === 0) return;
    this.idleCheckQueued = true;
    setImmediate(() => {
      this.idleCheckQueued = false;
      if (!this.dead && this.active === 0 && this.waits.size > 0) this.suspend();
    });
  }

  /** Every path is waiting: record what on, release the lease and drop this execution. */
  private suspend(): void {
    const { status, waiting: waitingJson, waitQueues, waitRuns, wakeAt } = waitRecord(this.waits);
    const now = this.core.clock.now();
    this.core.writes.patch(
      {
        id: this.id,
        status,
        failureSignature: this.signature(status, null, waitingJson),
        waiting: waitingJson,
        waitQueues,
        waitRuns,
        wakeAt,
        owner: null,
        leaseUntil: null,
        updatedAt: now,
      },
      this.core.owner,
    );
    this.trace?.end(status, now);
    this.stop();
    this.core.suspended(this, status);
  }

  /** Stops this execution for good in this process: waits dropped, signals fired. */
  stop(reason: unknown = new Abandoned()): void {
    if (this.dead) return;
    this.dead = true;
    this.trace?.end(reason instanceof RunCancelledError ? "cancelled" : "stopped", this.core.clock.now());
    for (const w of this.waits) {
      if (w.deadline !== null) this.core.unwatch(w);
      if (w.child) this.core.childRuns.unwatch(w);
    }
    this.waits.clear();
    this.root.cancel(reason);
    for (const c of this.controllers) c.abort(reason);
    this.controllers.clear();
  }

  /** The failure signature stored with the run in this status (null unless failed or retrying). */
  private signature(status: string, error: string | null, waiting: string | null): string | null {
    if (status !== "failed" && status !== "retrying") return null;
    return storedSignature({ workflow: this.workflow, status, error, waiting }, () => this.history.all());
  }

  // ---- the end -------------------------------------------------------------------------------

  private finish(output: unknown): void {
    if (this.dead) return;
    if (this.verifier) {
      if (!this.fatal && this.root.next < this.root.loaded) {
        try {
          this.diverge(this.root, this.root.next, this.root.entry(this.root.next), null);
        } catch {
          // recorded as fatal
        }
      }
      this.verifier.finished(this.fatal);
      return;
    }
    if (this.undoCause) {
      this.undo();
      return;
    }
    let json: string | null;
    try {
      if (this.fatal) throw this.fatal;
      // History holds more root entries than the code ran: something was removed.
      if (this.root.next < this.root.loaded)
        this.diverge(this.root, this.root.next, this.root.entry(this.root.next), null);
      json = output === undefined ? null : toJson(output, `The result of run "${this.label}"`);
    } catch (err) {
      this.fail(err);
      return;
    }
    void this.end("completed", { output: json });
  }

  private fail(err: unknown): void {
    if (this.dead || isInternal(err)) return;
    if (this.verifier) {
      this.verifier.finished(this.fatal ?? err);
      return;
    }
    const error = this.fatal && err !== this.fatal ? this.fatal : err;
    if (!this.undoCause && this.rollbacks.due) {
      const json = JSON.stringify(errorInfo(error));
      this.undoCause = {
        error: error instanceof Error ? error : undoCauseOf(json).error,
        json,
        cancel: false,
      };
    }
    if (this.undoCause) {
      this.undo();
      return;
    }
    this.trace?.end("failed", this.core.clock.now(), error);
    void this.end("failed", { error: JSON.stringify(errorInfo(error)) });
  }

  /** Cancel with rollback: stops the code and undoes what is due; false when nothing is (cancel plainly). */
  cancelWithRollback(reasonJson: string): boolean {
    if (this.undoing) return true;
    if (this.dead || !this.rollbacks.due) return false;
    this.undoCause = { ...undoCauseOf(reasonJson), cancel: true };
    this.undo();
    return true;
  }

  /**
   * Stops the code, records the run rolling-back, runs the handlers due (rollback.ts) and ends the run:
   * failed with its cause, cancelled when a cancel asked, failed with both errors when a handler failed.
   */
  private undo(): void {
    const cause = this.undoCause;
    if (this.undoing || this.dead || !cause) return;
    this.undoing = true;
    if (cause.cancel) cancelEntries(this, [this.root]);
    this.root.cancel(new Abandoned());
    this.dropWaits(this.root);
    for (const c of this.controllers) c.abort(new Abandoned());
    this.controllers.clear();
    this.core.writes.patch(
      {
        id: this.id,
        status: "rolling-back",
        error: cause.json,
        failureSignature: null,
        waiting: null,
        waitQueues: null,
        waitRuns: null,
        updatedAt: this.core.clock.now(),
      },
      this.core.owner,
    );
    this.core.statusChanged(this, "rolling-back");
    this.rollbacks.run(cause.error).then(
      (failure) => {
        if (this.dead) return;
        if (!failure) {
          void this.end(cause.cancel ? "cancelled" : "failed", { error: cause.json });
          return;
        }
        const info = fromJson<ErrorInfo>(cause.json) ?? { name: "Error", message: "unknown" };
        const error = new RollbackFailedError(this.label, info, failure);
        this.trace?.end("failed", this.core.clock.now(), error);
        void this.end("failed", { error: JSON.stringify(errorInfo(error)) });
      },
      () => this.stop(),
    );
  }

  private async end(
    status: "completed" | "failed" | "cancelled",
    fields: { output?: string | null; error?: string },
  ): Promise<void> {
    const now = this.core.clock.now();
    this.core.writes.patch(
      {
        id: this.id,
        status,
        ...fields,
        failureSignature: this.signature(status, fields.error ?? null, null),
        waiting: null,
        waitQueues: null,
        waitRuns: null,
        wakeAt: null,
        owner: null,
        leaseUntil: null,
        updatedAt: now,
        finishedAt: now,
      },
      this.core.owner,
    );
    this.trace?.end(status, now);
    this.stop();
    const failed = await this.core.writes.flush();
    if (!failed.has(this.id)) this.core.finished(this, status, fields);
  }
}
