// The engine: owns executions, leases and the scheduler, and offers runs to applications.
//
// IMPORTANT invariants:
// - A run executes only in the process holding its lease (owner + lease_until); leases are renewed
//   by a heartbeat and released when a run suspends or ends.
// - One timer serves every run: armed at the earliest wake-up (stored, or held in memory by a live
//   run); `tick()` does one pass of the scheduler and is what tests call.
// - Another process's writes (messages, requests) are noticed through the store's change counter.

import {
  EngineClosedError,
  InvalidInputError,
  RunCancelledError,
  RunNotFoundError,
  StorageError,
  UnknownWorkflowError,
  WaymarkError,
} from "../errors.js";
import {
  type EntryRow,
  type MessageRow,
  type RunRow,
  type RunStatus,
  type Store,
  TERMINAL_STATUSES,
} from "../storage/store.js";
import type { AnyWorkflow } from "../workflow.js";
import { cancelEntries } from "./branches.js";
import { type Clock, systemClock } from "./clock.js";
import { makeContext } from "./context.js";
import type { EngineCore, RunIdentity, Wait } from "./core.js";
import { checkVersions, type Definitions, publishDefinitions } from "./definitions.js";
import { type EngineEvent, EventHub } from "./events.js";
import { RunExecution } from "./execution.js";
import { toJson } from "./json.js";
import { expireDeadOwners, makeOwnerId } from "./owners.js";
import { type ReplayOptions, type ReplayPlan, type ReplayRequest, replayOrRequest } from "./replay.js";
import { Requests } from "./requests.js";
import { type RunRef, runIdOf } from "./run-ref.js";
import { RunsApi } from "./runs-api.js";
import { WriteQueue } from "./write-queue.js";

/** What a cancelled run records as its error: who cancelled it and when. */
function cancelReason(label: string, by: string, at: number): string {
  return JSON.stringify({
    name: "Cancelled",
    code: "RUN_CANCELLED",
    message: `Run "${label}" was cancelled by ${by} at ${new Date(at).toISOString()}.`,
    details: { by, at },
  });
}

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
}

export class Engine extends RunsApi implements EngineCore {
  readonly clock: Clock;
  readonly writes: WriteQueue;
  readonly owner: string;
  readonly events = new EventHub();
  readonly active = new Map<number, RunExecution>();
  private readonly timed = new Set<Wait>();
  /** Runs being loaded for execution, with messages sent to them meanwhile. */
  readonly loading = new Map<number, MessageRow[]>();
  private readonly faulted = new Map<number, number>();
  private readonly requests: Requests;
  private readonly leaseMs: number;
  private readonly pollMs: number;
  private readonly maxActive: number;
  private readonly executes: boolean;
  private readonly randomFn: () => number;
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  /**
   * Until this time every run this process holds has a lease valid for at least a third of the lease
   * length more (claims and renewals set lease_until = now + leaseMs), so commits skip the lease check.
   */
  private leaseSafeUntil = 0;
  private poller: NodeJS.Timeout | null = null;
  private heartbeat: NodeJS.Timeout | null = null;
  private unsubscribeClock: (() => void) | null = null;
  private unsubscribeStore: (() => void) | null = null;
  private ticking: Promise<void> | null = null;
  private tickAgain = false;
  private lastChange = -1;
  private messageMark = 0;
  closed = false;
  /** True once start() got past its checks (a failed start writes nothing on close). */
  private started = false;

  constructor(store: Store, defs: Definitions, options: EngineOptions = {}) {
    super(store, defs);
    this.clock = options.clock ?? systemClock;
    this.owner = options.ownerId ?? makeOwnerId();
    this.leaseMs = options.leaseMs ?? 15_000;
    this.pollMs = options.pollMs ?? 50;
    this.maxActive = options.maxActiveRuns ?? 5000;
    this.randomFn = options.random ?? Math.random;
    this.executes = options.execute ?? defs.size > 0;
    this.writes = new WriteQueue(
      store,
      () => this.clock.now(),
      (ids, err) => this.onWriteFailure(ids, err),
      () => this.clock.now() >= this.leaseSafeUntil,
      () => this.active.size <= 1 && this.loading.size === 0,
    );
    this.requests = new Requests(this);
  }

  /** Checks the database against the registry, takes over dead owners' runs and starts the background loops. */
  async start(): Promise<void> {
    // Reads first, so a database that cannot be read is refused before anything is written to it.
    if (this.executes) await checkVersions(this.store, this.defs);
    this.messageMark = await this.store.maxMessageId();
    this.lastChange = await this.store.changeCounter();
    if (this.executes) await publishDefinitions(this.store, this.defs, this.clock.now());
    // Only a process that executes takes dead owners' runs over; an attached reader writes nothing here.
    if (this.executes && (await expireDeadOwners(this.store, this.owner, this.clock.now())) > 0) this.poke();
    this.unsubscribeClock = this.clock.onAdvance?.(() => this.poke()) ?? null;
    this.poller = setInterval(() => void this.pollChanges(), this.pollMs);
    this.unsubscribeStore = this.store.onChange?.(() => void this.tick()) ?? null;
    if (this.executes) {
      this.heartbeat = setInterval(() => void this.renew(), Math.max(10, Math.floor(this.leaseMs / 3)));
    }
    this.started = true;
    this.leaseSafeUntil = this.clock.now() + Math.floor((this.leaseMs * 2) / 3);
    await this.tick();
  }

  // ---- EngineCore ---------------------------------------------------------------------------

  random(): number {
    return this.randomFn();
  }

  watch(wait: Wait): void {
    this.timed.add(wait);
    if (wait.deadline !== null && wait.deadline < this.timerAt) this.arm(wait.deadline);
  }

  unwatch(wait: Wait): void {
    this.timed.delete(wait);
  }

  suspended(exec: RunIdentity, status: string): void {
    this.active.delete(exec.id);
    void this.writes.flush().then(() => {
      this.events.emit({ type: "run", runId: exec.id, workflow: exec.workflow, key: exec.key, status });
      this.poke();
    });
  }

  finished(exec: RunIdentity, status: "completed" | "failed"): void {
    this.active.delete(exec.id);
    this.events.emit({ type: "run", runId: exec.id, workflow: exec.workflow, key: exec.key, status });
    this.poke();
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

  /** Subscribes to run, entry and broadcast events; returns the unsubscribe function. */
  on(listener: (event: EngineEvent) => void): () => void {
    return this.events.on(listener);
  }

  // ---- running runs ---------------------------------------------------------------------------

  /** Gets a run by key, creating it (and starting it) if it does not exist. */
  async getOrCreate(workflow: string, key: string, input?: unknown) {
    this.assertOpen();
    const def = this.latest(workflow);
    this.checkKey(key);
    const inputJson = input === undefined ? null : toJson(input, `The input of run "${workflow}/${key}"`);
    const now = this.clock.now();
    const claim = this.executes && this.active.size < this.maxActive;
    const { run, created } = await this.writes.create({
      workflow,
      key,
      version: def.version,
      input: inputJson,
      initialState: toJson(def.initialState, `The initial state of workflow "${workflow}"`),
      now,
      owner: claim ? this.owner : null,
      leaseUntil: claim ? now + this.leaseMs : null,
    });
    if (created) {
      if (claim) this.begin(run, [], []);
      else this.poke();
      this.events.emit({ type: "run", runId: run.id, workflow, key, status: run.status });
    }
    return this.handleFor(run);
  }

  /** Starts executing a run this process has claimed. */
  private begin(run: RunRow, entries: EntryRow[], loadedMessages: MessageRow[]): void {
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
    const exec = new RunExecution(this, def, run, entries, messages, makeContext);
    this.active.set(run.id, exec);
    exec.start();
  }

  private onWriteFailure(runIds: number[], err: unknown): void {
    const retryAt = this.clock.now() + (err instanceof StorageError ? 1000 : 0);
    for (const id of runIds) {
      const exec = this.active.get(id);
      if (!exec) continue;
      exec.stop();
      this.active.delete(id);
      if (err instanceof StorageError) this.faulted.set(id, retryAt);
    }
    if (err instanceof StorageError) {
      this.reportStorageError(err, runIds);
      this.arm(retryAt);
    }
  }

  /** Tells stderr (once per distinct message per second) and listeners that the database failed. */
  private lastReport = { message: "", at: 0 };
  reportStorageError(err: unknown, runIds: number[] = []): void {
    const message = err instanceof Error ? err.message : String(err);
    const code = (err as { code?: string }).code ?? "STORAGE_ERROR";
    const now = Date.now();
    if (message !== this.lastReport.message || now - this.lastReport.at > 1000) {
      process.stderr.write(`waymark: ${message}\n`);
      this.lastReport = { message, at: now };
    }
    this.events.emit({ type: "storage-error", code, message, runIds });
  }

  /**
   * Cancels a run at once: a running step's AbortSignal fires, waits and timers are dropped, history is
   * kept. A run executing in another process is asked to stop ("requested"); a finished run is left as is.
   */
  async cancel(run: RunRef, options: { by?: string } = {}): Promise<RunStatus | "requested"> {
    this.assertOpen();
    const runId = runIdOf(run, "engine.cancel");
    const exec = this.active.get(runId);
    const now = this.clock.now();
    const by = options.by ?? "the API (engine.cancel)";
    if (exec) {
      // Its entries in progress end as cancelled, a running step's attempt too, before anything else.
      cancelEntries(exec, [exec.root]);
      exec.stop(new RunCancelledError(exec.label));
      this.active.delete(runId);
      await this.writes.flush();
      await this.store.cancelRun(runId, now, this.owner, cancelReason(exec.label, by, now));
      this.events.emit({ type: "run", runId, workflow: exec.workflow, key: exec.key, status: "cancelled" });
      return "cancelled";
    }
    const row = await this.runRow(runId);
    if (TERMINAL_STATUSES.includes(row.status)) return row.status;
    if (
      await this.store.cancelRun(runId, now, this.owner, cancelReason(`${row.workflow}/${row.key}`, by, now))
    ) {
      this.events.emit({ type: "run", runId, workflow: row.workflow, key: row.key, status: "cancelled" });
      return "cancelled";
    }
    await this.writes.request(runId, "cancel", JSON.stringify({ by }));
    return "requested";
  }

  /** Cancels a run this process just claimed (for a cancel request). */
  async cancelClaimed(run: RunRow, by: string): Promise<void> {
    await this.writes.flush();
    const now = this.clock.now();
    if (
      await this.store.cancelRun(run.id, now, this.owner, cancelReason(`${run.workflow}/${run.key}`, by, now))
    ) {
      this.events.emit({
        type: "run",
        runId: run.id,
        workflow: run.workflow,
        key: run.key,
        status: "cancelled",
      });
    }
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
    return replayOrRequest(this, runIdOf(run, "engine.replay"), options);
  }

  // ---- scheduler ----------------------------------------------------------------------------

  /** Wakes the scheduler soon (something became due). */
  poke(): void {
    this.arm(this.clock.now());
  }

  private arm(at: number): void {
    if (this.closed) return;
    // Already armed at or before `at` (a due time always re-arms: a fake clock may have jumped past the timer).
    if (at >= this.timerAt && at > this.clock.now()) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    const delay = Math.min(Math.max(0, at - this.clock.now()), 2_000_000_000);
    this.timer = setTimeout(() => {
      this.timer = null;
      this.timerAt = Number.POSITIVE_INFINITY;
      void this.tick();
    }, delay);
  }

  /** One pass of the scheduler: releases due waits, claims due runs, notices other processes. */
  tick(): Promise<void> {
    if (this.ticking) {
      this.tickAgain = true;
      return this.ticking;
    }
    this.ticking = this.tickLoop().finally(() => {
      this.ticking = null;
    });
    return this.ticking;
  }

  private async tickLoop(): Promise<void> {
    do {
      this.tickAgain = false;
      try {
        await this.tickOnce();
      } catch (err) {
        if (this.closed) return;
        this.reportStorageError(err);
        this.arm(this.clock.now() + 1000);
        return;
      }
    } while (this.tickAgain && !this.closed);
  }

  private async tickOnce(): Promise<void> {
    if (this.closed) return;
    const now = this.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const w of this.timed) {
      if (w.deadline! <= now) {
        w.exec.release(w);
        w.resolve();
      } else if (w.deadline! < next) next = w.deadline!;
    }
    await this.noticeChanges();
    if (this.executes) {
      await this.resumeFaulted(now);
      for (;;) {
        const room = this.maxActive - this.active.size;
        if (room <= 0) break;
        // Modest chunks, so engines sharing a database share the runs a burst of messages wakes.
        const limit = Math.min(room, 100);
        const claimed = await this.store.claimDue(now, this.owner, now + this.leaseMs, limit, [
          ...this.defs.keys(),
        ]);
        if (claimed.length === 0) break;
        const resume: number[] = [];
        try {
          for (const run of claimed) {
            // Ours already (its lease lapsed while we ran it, e.g. a blocked event loop): the claim renewed it.
            if (this.active.has(run.id) || this.loading.has(run.id)) continue;
            if (!(await this.requests.applyOnClaim(run))) resume.push(run.id);
          }
          // Messages this process sends while these runs load are kept for them (see send()).
          for (const id of resume) this.loading.set(id, []);
          try {
            for (const l of await this.store.loadRuns(resume)) {
              this.begin(l.run, l.entries, l.messages);
              this.events.emit({
                type: "run",
                runId: l.run.id,
                workflow: l.run.workflow,
                key: l.run.key,
                status: "running",
              });
            }
          } finally {
            for (const id of resume) this.loading.delete(id);
          }
        } catch (err) {
          // Claimed (ours in the database) but not running here: keep their leases and load them again
          // shortly, as for a failed commit; otherwise nobody would run them until their lease lapsed.
          const retryAt = this.clock.now() + 1000;
          for (const run of claimed) if (!this.active.has(run.id)) this.faulted.set(run.id, retryAt);
          throw err;
        }
        if (claimed.length < limit) break;
      }
    }
    for (const at of this.faulted.values()) if (at < next) next = at;
    const stored = this.executes ? await this.store.nextWakeAt([...this.defs.keys()]) : null;
    if (stored !== null && stored < next) next = stored;
    if (Number.isFinite(next)) this.arm(Math.max(next, now + 1));
  }

  private async resumeFaulted(now: number): Promise<void> {
    const due = [...this.faulted].filter(([, at]) => at <= now).map(([id]) => id);
    if (due.length === 0) return;
    const loaded = await this.store.loadRuns(due);
    for (const id of due) this.faulted.delete(id);
    for (const l of loaded) {
      if (l.run.owner === this.owner && !this.active.has(l.run.id)) this.begin(l.run, l.entries, l.messages);
    }
  }

  /** Looks for writes of other processes: new messages for live runs, requests about them. */
  private async noticeChanges(): Promise<void> {
    const change = await this.store.changeCounter();
    if (change === this.lastChange) return;
    this.lastChange = change;
    this.events.emit({ type: "external" });
    for (;;) {
      const fresh = await this.store.messagesSince(this.messageMark, 1000);
      for (const m of fresh) {
        this.messageMark = m.id;
        if (m.consumedAt !== null) continue;
        const exec = this.active.get(m.runId);
        if (exec) exec.deliver(m);
        else this.loading.get(m.runId)?.push(m);
      }
      if (fresh.length < 1000) break;
    }
    if (this.active.size > 0) await this.requests.applyToActive([...this.active.keys()]);
  }

  private async pollChanges(): Promise<void> {
    if (this.closed || this.ticking) return;
    try {
      if ((await this.store.changeCounter()) !== this.lastChange) void this.tick();
    } catch {
      // the next poll tries again
    }
  }

  /** One pass of the lease heartbeat (start() repeats it; tests call it as they call tick()). */
  async renew(): Promise<void> {
    if (this.closed) return;
    try {
      const at = this.clock.now();
      // Only the runs this process really holds: one it claimed but lost track of expires and is claimed again.
      const held = [...this.active.keys(), ...this.loading.keys(), ...this.faulted.keys()];
      const renewed = new Set(await this.store.renewLeases(this.owner, at + this.leaseMs, held));
      // A lease not renewed is another process's now (it took the run over): stop executing the run
      // here before trusting the leases left, so nothing of it is written from this process again.
      for (const id of held) if (!renewed.has(id)) this.leaseGone(id);
      this.leaseSafeUntil = at + Math.floor((this.leaseMs * 2) / 3);
      if ((await expireDeadOwners(this.store, this.owner, this.clock.now())) > 0) this.poke();
    } catch (err) {
      this.reportStorageError(err);
    }
  }

  /** Stops executing a run whose lease this process no longer holds. */
  private leaseGone(runId: number): void {
    this.faulted.delete(runId);
    const exec = this.active.get(runId);
    // One that is ending or suspending released its lease itself; it leaves `active` on its own.
    if (!exec || exec.dead) return;
    exec.stop();
    this.active.delete(runId);
  }

  // ---- shutdown -------------------------------------------------------------------------------

  /** Stops the loops, waits for pending writes and hands this process's runs back to the database. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const t of [this.timer, this.poller, this.heartbeat]) if (t) clearTimeout(t);
    this.unsubscribeClock?.();
    this.unsubscribeStore?.();
    if (this.ticking) await this.ticking.catch(() => {});
    for (const exec of this.active.values()) exec.stop();
    this.active.clear();
    await this.writes.flush();
    try {
      if (this.executes && this.started) await this.store.expireOwner(this.owner, this.clock.now());
    } catch {
      // the lease expires by itself
    }
    this.events.clear();
    await this.store.close();
  }

  assertOpen(): void {
    if (this.closed) throw new EngineClosedError();
  }

  checkKey(key: unknown): asserts key is string {
    if (
      typeof key !== "string" ||
      key.length === 0 ||
      key.length > 512 ||
      /[\u0000-\u001f]/.test(key) ||
      key === "." ||
      key === ".."
    ) {
      throw new InvalidInputError(
        `Invalid run key ${JSON.stringify(key)}: a key is a non-empty string of at most 512 characters without control characters, and not "." or ".." (those read as path steps in URLs).`,
      );
    }
  }

  latest(workflow: string): AnyWorkflow {
    const versions = typeof workflow === "string" ? this.defs.get(workflow) : undefined;
    if (!versions && this.defs.size === 0) {
      throw new WaymarkError(
        "NO_CODE",
        `This engine has no workflows (attach() reads and messages runs that another process executes), so it cannot create a run of ${JSON.stringify(String(workflow))}. Create runs from the application that registers the workflow (setup({ use }).start()), or use engine.get(workflow, key) for an existing run.`,
      );
    }
    if (!versions) throw new UnknownWorkflowError(String(workflow), [...this.defs.keys()]);
    let best: AnyWorkflow | undefined;
    for (const d of versions.values()) if (!best || d.version > best.version) best = d;
    return best!;
  }

  /** The run row for a workflow and key, or RunNotFoundError. */
  async requireRun(workflow: string, key: string): Promise<RunRow> {
    const row = await this.store.findRun(workflow, key);
    if (!row) {
      if (this.defs.size > 0 && !this.defs.has(workflow))
        throw new UnknownWorkflowError(workflow, [...this.defs.keys()]);
      throw new RunNotFoundError(workflow, key);
    }
    return row;
  }
}
