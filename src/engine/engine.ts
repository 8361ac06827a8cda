// The engine: owns executions and offers runs to applications through WaymarkEngine (api.ts). Its parts:
// the scheduler (scheduler.ts), the lease keeper (leases.ts), the change watcher (change-watcher.ts).
//
// IMPORTANT invariants:
// - A run executes only in the process holding its lease (owner + lease_until); leases are renewed
//   by a heartbeat and released when a run suspends or ends.
// - One timer serves every run (see scheduler.ts); `tick()` does one pass and is what tests call.
// - Another process's writes (messages, requests) are noticed through the store's change counter.

import { compareRuns } from "../diagnosis/compare.js";
import type { NoComparison, RunComparison } from "../diagnosis/compare-types.js";
import { diagnose } from "../diagnosis/diagnose.js";
import { type FailureList, listFailures } from "../diagnosis/signatures.js";
import type { DiagnoseOptions, Diagnosis } from "../diagnosis/types.js";
import { EngineClosedError, RunNotFoundError, StorageError, UnknownWorkflowError } from "../errors.js";
import { log } from "../log.js";
import { EngineMetrics } from "../observability/metrics.js";
import { startRunTrace } from "../observability/tracing.js";
import { assertStartAllowed } from "../start-guard.js";
import type { PackedSteps } from "../storage/packed-steps.js";
import type { EntryRow, MessageRow, RunRow, RunStatus, Store } from "../storage/store.js";
import type { CreateOptions, ListFailuresOptions, WaymarkEngine } from "./api.js";
import { Audit } from "./audit.js";
import { Bulk } from "./bulk.js";
import { cancelledEnded, cancelRun } from "./cancel.js";
import { ChangeWatcher } from "./change-watcher.js";
import { ChildRuns } from "./child-runs.js";
import { type Clock, systemClock } from "./clock.js";
import { type RunConcurrency, runConcurrency } from "./concurrency.js";
import { makeContext } from "./context.js";
import type { EngineCore, RunIdentity, Wait } from "./core.js";
import { checkVersions, type Definitions, latestDefinition, publishDefinitions } from "./definitions.js";
import type { DriftReport } from "./drift-check.js";
import { type EngineEvent, EventHub } from "./events.js";
import { RunExecution } from "./execution.js";
import { toJson } from "./json.js";
import { LeaseKeeper } from "./leases.js";
import { expireDeadOwners, makeOwnerId } from "./owners.js";
import { Pruner, pruneOlderThan } from "./pruner.js";
import { checkRunKey } from "./query-input.js";
import { type ReplayOptions, type ReplayPlan, type ReplayRequest, replayOrRequest } from "./replay.js";
import { Requests } from "./requests.js";
import type { PruneOptions, PruneResult, Retention } from "./retention.js";
import type { RunRef } from "./run-ref.js";
import { RunsApi } from "./runs-api.js";
import type { ScheduleDef } from "./schedule-spec.js";
import { Scheduler } from "./scheduler.js";
import { Schedules } from "./schedules.js";
import { createTags, type Tags, tagsByRun } from "./tags.js";
import { WriteQueue } from "./write-queue.js";

export interface EngineOptions {
  clock?: Clock;
  /** How long a lease lasts without renewal (ms). Default 15 s. */
  leaseMs?: number;
  /** How often to look for other processes' writes (ms). Default 50. */
  pollMs?: number;
  /** Most runs executing in memory at once. Default 5,000. */
  maxActiveRuns?: number;
  random?: () => number;
  /** Don't execute runs (attach mode: read, send and request only). */
  execute?: boolean;
  /**
   * This process's lease owner id (default `host:pid:random`). Runs leased by a dead pid of this host are
   * taken over at once; any other owner's runs only once its lease expires.
   */
  ownerId?: string;
  /** How long finished runs are kept per status, for workflows without their own setting (see retention.ts). */
  retention?: Retention;
}

/**
 * The engine behind WaymarkEngine. Its other public members are the machinery (for the engine's own parts,
 * diagnosis and tests through an explicit import of this module), not the applications' interface.
 */
export class Engine extends RunsApi implements WaymarkEngine, EngineCore {
  readonly clock: Clock;
  readonly writes: WriteQueue;
  readonly owner: string;
  readonly events = new EventHub();
  /** This engine's metrics: served as Prometheus text by `metrics.scrape()` (the HTTP server's /metrics). */
  readonly metrics: EngineMetrics;
  readonly active = new Map<number, RunExecution>();
  /** Runs being loaded for execution, with messages sent to them meanwhile. */
  readonly loading = new Map<number, MessageRow[]>();
  readonly requests: Requests;
  readonly scheduler: Scheduler;
  /** The schedules of setup({ schedules }): fired by the scheduler's pass; list, pause and resume. */
  readonly schedules: Schedules;
  /** The audit of writes made through MCP, the inspector and the CLI (audit.ts). */
  readonly audit: Audit;
  /** Deletes finished runs past their retention, a batch per scheduler pass (pruner.ts). */
  readonly pruner: Pruner;
  /** Bulk replay and cancel through pinned plans (bulk.ts). */
  readonly bulk: Bulk;
  readonly leases: LeaseKeeper;
  readonly changes: ChangeWatcher;
  /** ctx.child's runs and the parents waiting on them in memory (child-runs.ts). */
  readonly childRuns: ChildRuns;
  readonly leaseMs: number;
  readonly maxActive: number;
  /** False in attach mode: this process reads, sends and requests, and executes nothing. */
  readonly executes: boolean;
  private readonly pollMs: number;
  private readonly randomFn: () => number;
  private unsubscribeClock: (() => void) | null = null;
  closed = false;
  private readonly closing = new AbortController();
  /** True once start() got past its checks (a failed start writes nothing on close). */
  private started = false;
  /**
   * The runs an execution here has begun (so replayed, or is replaying, their history against this code),
   * noted from start() until the deploy check after it ends, which skips them (start-check.ts); else null.
   */
  resumedHere: Set<number> | null = null;
  /** The deploy check begun after start() (start-check.ts): its report, null if it stopped; null when off. */
  deployCheck: Promise<DriftReport | null> | null = null;

  constructor(
    store: Store,
    defs: Definitions,
    options: EngineOptions = {},
    schedules: ReadonlyMap<string, ScheduleDef> = new Map(),
  ) {
    super(store, defs);
    this.clock = options.clock ?? systemClock;
    this.owner = options.ownerId ?? makeOwnerId();
    this.leaseMs = options.leaseMs ?? 15_000;
    this.pollMs = options.pollMs ?? 50;
    this.maxActive = options.maxActiveRuns ?? 5000;
    this.randomFn = options.random ?? Math.random;
    this.executes = options.execute ?? defs.size > 0;
    this.scheduler = new Scheduler(this);
    this.schedules = new Schedules(this, schedules);
    this.audit = new Audit(store, this.clock);
    this.pruner = new Pruner(this, options.retention);
    if (this.pruner.active)
      this.events.onFinished = (workflow, status) => this.pruner.finished(workflow, status);
    this.bulk = new Bulk(this);
    this.leases = new LeaseKeeper(this, this.leaseMs);
    this.changes = new ChangeWatcher(this);
    this.childRuns = new ChildRuns(store, defs, (w, k, i, parent) => this.createRun(w, k, i, parent));
    this.writes = new WriteQueue(
      store,
      () => this.clock.now(),
      (ids, err) => this.onWriteFailure(ids, err),
      () => this.leases.mustCheck,
      () => this.active.size <= 1 && this.loading.size === 0,
    );
    this.requests = new Requests(this);
    this.metrics = new EngineMetrics({
      store,
      held: () => this.active.size,
      workflows: () => this.defs.keys(),
    });
    this.writes.onCommit = (seconds) => this.metrics.commit(seconds);
  }

  /** Checks the database against the registry, takes over dead owners' runs and starts the background loops. */
  async start(): Promise<void> {
    assertStartAllowed("engine.start()");
    // Reads first, so a database that cannot be read is refused before anything is written to it.
    if (this.executes) await checkVersions(this.store, this.defs);
    await this.changes.init();
    if (this.executes) await this.schedules.declare();
    // Only a process that executes takes dead owners' runs over; an attached reader writes nothing here.
    if (this.executes)
      this.deadOwnersExpired(await expireDeadOwners(this.store, this.owner, this.clock.now()));
    this.unsubscribeClock = this.clock.onAdvance?.(() => this.poke()) ?? null;
    this.changes.start(this.pollMs);
    this.leases.start(this.executes);
    this.started = true;
    await this.scheduler.tick();
    // After the first pass, and a macrotask later, so resumed runs do not wait on it: a replay goes on in
    // microtasks, which this continuation would otherwise join between its steps (the JSON Schema conversions
    // and the read took 1.3 ms of a 10,000-step resume). start() still returns only once other processes can
    // read the definitions.
    if (this.executes) {
      await new Promise<void>((resolve) => setImmediate(resolve));
      await publishDefinitions(this.store, this.defs, this.clock.now());
    }
  }

  // ---- EngineCore ---------------------------------------------------------------------------

  random(): number {
    return this.randomFn();
  }

  watch(wait: Wait): void {
    this.scheduler.watch(wait);
  }

  unwatch(wait: Wait): void {
    this.scheduler.unwatch(wait);
  }

  suspended(exec: RunIdentity, status: string): void {
    this.active.delete(exec.id);
    void this.writes.flush().then(() => {
      this.events.emit({ type: "run", runId: exec.id, workflow: exec.workflow, key: exec.key, status });
      this.poke();
    });
  }

  finished(
    exec: RunIdentity,
    status: "completed" | "failed" | "cancelled",
    fields: { output?: string | null; error?: string } = {},
  ): void {
    this.active.delete(exec.id);
    // What was just committed, for the watches this event wakes (result() settles from it, no read).
    this.ending = {
      id: exec.id,
      workflow: exec.workflow,
      key: exec.key,
      status,
      output: fields.output ?? null,
      error: fields.error ?? null,
    };
    try {
      this.events.emit({ type: "run", runId: exec.id, workflow: exec.workflow, key: exec.key, status });
    } finally {
      this.ending = null;
    }
    if (status === "cancelled") void cancelledEnded(this, exec.id, `${exec.workflow}/${exec.key}`);
    else {
      this.childRuns.ended(exec.id);
      this.poke();
    }
  }

  statusChanged(exec: RunIdentity, status: "rolling-back"): void {
    void this.writes.flush().then(() => {
      this.events.emit({ type: "run", runId: exec.id, workflow: exec.workflow, key: exec.key, status });
    });
  }

  emitEntry(exec: RunIdentity, row: EntryRow): void {
    if (this.events.observed) {
      this.events.emit({ type: "entry", runId: exec.id, workflow: exec.workflow, key: exec.key, row });
    }
  }

  emitBroadcast(exec: RunIdentity, event: string, data: unknown): void {
    this.events.emit({
      type: "broadcast",
      runId: exec.id,
      workflow: exec.workflow,
      key: exec.key,
      event,
      data,
    });
  }

  async runTags(runId: number): Promise<Tags> {
    return tagsByRun(await this.store.runTags([runId])).get(runId) ?? {};
  }

  /** Subscribes to run, entry and broadcast events; returns the unsubscribe function. */
  on(listener: (event: EngineEvent) => void): () => void {
    return this.events.on(listener);
  }

  // ---- running runs ---------------------------------------------------------------------------

  /** Gets a run by key, creating it (and starting it, with `options.tags`) if it does not exist. */
  async getOrCreate(workflow: string, key: string, input?: unknown, options?: CreateOptions) {
    return this.handleFor(await this.createRun(workflow, key, input, null, createTags(options)));
  }

  /** Creates a run (claimed and begun here when this process may) or finds it by workflow and key. */
  private async createRun(
    workflow: string,
    key: string,
    input: unknown,
    parentRunId: number | null,
    tags: Tags | null = null,
  ): Promise<RunRow> {
    this.assertOpen();
    const def = latestDefinition(this.defs, workflow);
    checkRunKey(key);
    const inputJson = input === undefined ? null : toJson(input, `The input of run "${workflow}/${key}"`);
    let concurrency: RunConcurrency | null;
    try {
      concurrency = runConcurrency(def.concurrency, `${workflow}/${key}`, input);
    } catch (err) {
      // A run that exists already is found whatever its key function says now.
      const existing = await this.store.findRun(workflow, key);
      if (existing) return existing;
      throw err;
    }
    const now = this.clock.now();
    // A limited run is claimed by the scheduler, which gives it a slot or queues it (concurrency.ts).
    const claim = this.executes && this.active.size < this.maxActive && concurrency === null;
    const started = startRunTrace(workflow, key, def.version, now);
    const { run, created } = await this.writes.create({
      workflow,
      key,
      version: def.version,
      input: inputJson,
      initialState: toJson(def.initialState, `The initial state of workflow "${workflow}"`),
      now,
      owner: claim ? this.owner : null,
      leaseUntil: claim ? now + this.leaseMs : null,
      traceContext: started.traceparent,
      parentRunId,
      concurrency,
      ...(tags ? { tags } : {}),
    });
    if (created) {
      started.created(run.id);
      if (claim) this.begin(run, [], []);
      else this.poke();
      this.events.emit({ type: "run", runId: run.id, workflow, key, status: run.status });
    }
    return run;
  }

  /** Starts executing a run this process has claimed. */
  begin(run: RunRow, entries: EntryRow[], loadedMessages: MessageRow[], packed?: PackedSteps): void {
    const late = this.loading.get(run.id) ?? [];
    const messages = late.length ? [...loadedMessages, ...late] : loadedMessages;
    const def = this.defs.get(run.workflow)?.get(run.version);
    if (!def) {
      this.writes.patch(
        { id: run.id, owner: null, leaseUntil: null, wakeAt: this.clock.now() + 60_000 },
        null,
      );
      return;
    }
    const exec = new RunExecution(this, def, run, entries, messages, makeContext, null, packed ?? null);
    this.active.set(run.id, exec);
    this.resumedHere?.add(run.id);
    exec.start();
  }

  private onWriteFailure(runIds: number[], err: unknown): void {
    const retryAt = this.clock.now() + (err instanceof StorageError ? 1000 : 0);
    for (const id of runIds) {
      const exec = this.active.get(id);
      if (!exec) continue;
      exec.stop();
      this.active.delete(id);
      if (err instanceof StorageError) this.scheduler.faulted.set(id, retryAt);
    }
    if (err instanceof StorageError) {
      this.reportStorageError(err, runIds);
      this.scheduler.arm(retryAt);
    }
  }

  /** Tells stderr (once per distinct message per second) and listeners that the database failed. */
  private lastReport = { message: "", at: 0 };
  reportStorageError(err: unknown, runIds: number[] = []): void {
    const message = err instanceof Error ? err.message : String(err);
    const code = (err as { code?: string }).code ?? "STORAGE_ERROR";
    const now = Date.now();
    if (message !== this.lastReport.message || now - this.lastReport.at > 1000) {
      log("error", "waymark", message, { code, runIds });
      this.lastReport = { message, at: now };
    }
    this.events.emit({ type: "storage-error", code, message, runIds });
  }

  /**
   * Cancels a run at once: a running step's AbortSignal fires, waits and timers are dropped, history is
   * kept. A run executing in another process is asked to stop ("requested"); a finished run is left as is.
   */
  cancel(run: RunRef, options: { by?: string; rollback?: boolean } = {}): Promise<RunStatus | "requested"> {
    return this.opened(async () =>
      cancelRun(
        this,
        await this.idOf(run, "engine.cancel"),
        options.by ?? "the API (engine.cancel)",
        options.rollback === true,
      ),
    );
  }

  /**
   * Replays a run after a fix (see replay.ts for what is discarded). Without the workflow's code in this
   * process (attached), a real replay is stored as a request for the process that runs it; this waits up
   * to `waitMs` for that process to carry it out.
   */
  async replay(
    run: RunRef,
    options: ReplayOptions & { waitMs?: number } = {},
  ): Promise<ReplayPlan | ReplayRequest> {
    return replayOrRequest(this, await this.idOf(run, "engine.replay"), options);
  }

  /** Why a run failed or is stuck, and the next actions (see diagnosis/). */
  diagnose(run: RunRef | { workflow: string; key: string }, options?: DiagnoseOptions): Promise<Diagnosis> {
    return this.opened(async () =>
      diagnose(
        this,
        typeof run === "object" && !("id" in run) ? run : await this.idOf(run, "engine.diagnose"),
        options,
      ),
    );
  }

  /** A run against another, by default the latest completed run of its workflow and version (diagnosis/compare.ts). */
  compareRuns(
    run: RunRef | { workflow: string; key: string },
    other?: RunRef | { workflow: string; key: string },
  ): Promise<RunComparison | NoComparison> {
    return this.opened(async () => {
      const id = async (ref: RunRef | { workflow: string; key: string }) =>
        typeof ref === "object" && !("id" in ref)
          ? (await this.requireRun(ref.workflow, ref.key)).id
          : this.idOf(ref, "engine.compareRuns");
      return compareRuns(this, await id(run), other === undefined ? undefined : await id(other));
    });
  }

  /** Failed and retrying runs grouped by signature, described by their newest runs. */
  listFailures(options?: ListFailuresOptions): Promise<FailureList> {
    return this.opened(() => listFailures(this, options));
  }

  /** Deletes (or with dryRun counts) finished runs older than `olderThan`, a batch at a time (pruner.ts). */
  async prune(options: PruneOptions): Promise<PruneResult> {
    const result = await this.opened(() => pruneOlderThan(this.store, this.clock.now(), options));
    if (!result.dryRun) this.pruner.report(result.runs);
    return result;
  }

  // ---- the parts ------------------------------------------------------------------------------

  /** Wakes the scheduler soon (something became due). */
  poke(): void {
    this.scheduler.arm(this.clock.now());
  }

  /**
   * Dead owners' runs were made claimable: claim them soon. The takeover is counted when the claim takes
   * them (scheduler.ts), so a run is counted once however it became claimable.
   */
  deadOwnersExpired(runs: number): void {
    if (runs > 0) this.poke();
  }

  /**
   * One pass of the scheduler (see scheduler.ts), after a turn of the event loop: what the previous pass
   * began commits first, even when the caller (a test moving a FakeClock in a loop) never yields itself.
   */
  async tick(): Promise<void> {
    await new Promise<void>((resolve) => setImmediate(resolve));
    return this.scheduler.tick();
  }

  /** One pass of the lease heartbeat (see leases.ts). */
  renew(): Promise<void> {
    return this.leases.renew();
  }

  // ---- shutdown -------------------------------------------------------------------------------

  /** Aborted when the engine closes: background work begun for it (the deploy check) stops. */
  get closeSignal(): AbortSignal {
    return this.closing.signal;
  }

  /** Stops the loops, waits for pending writes and hands this process's runs back to the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.closing.abort();
    this.changes.stop();
    this.leases.stop();
    this.unsubscribeClock?.();
    await this.scheduler.stop();
    for (const exec of this.active.values()) exec.stop();
    this.active.clear();
    await this.writes.flush();
    try {
      if (this.executes && this.started) await this.store.expireOwner(this.owner, this.clock.now());
    } catch {
      // the lease expires by itself
    }
    this.events.clear();
    this.metrics.close();
    await this.store.close();
  }

  assertOpen(): void {
    if (this.closed) throw new EngineClosedError();
  }

  /** The run row for a workflow and key, or RunNotFoundError. */
  async requireRun(workflow: string, key: string): Promise<RunRow> {
    const row = await this.findRun(workflow, key);
    if (!row) {
      if (this.defs.size > 0 && !this.defs.has(workflow))
        throw new UnknownWorkflowError(workflow, [...this.defs.keys()]);
      throw new RunNotFoundError(workflow, key);
    }
    return row;
  }
}

/** The Engine behind a WaymarkEngine, machinery included: for this repository's tests and tools only. */
export function internals(engine: WaymarkEngine<any>): Engine {
  if (!(engine instanceof Engine)) {
    throw new TypeError("internals() takes an engine made by setup({ use }).start() or attach().");
  }
  return engine;
}
