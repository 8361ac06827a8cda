// The scheduler: one timer serves every run, armed at the earliest wake-up (stored, or held in memory by a
// live run); `tick()` does one pass (releases due waits, claims due runs, fires schedules, prunes one batch of
// expired runs, notices other processes) and is what tests call.
//
// IMPORTANT: passes never overlap: a tick asked for during one runs once more right after it.

import type { Wait } from "./core.js";
import type { Engine } from "./engine.js";

export class Scheduler {
  /** Waits with a deadline held in memory by live runs. */
  private readonly timed = new Set<Wait>();
  /** Runs this process holds but could not load or commit (a storage error), with when to try again. */
  readonly faulted = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private timerAt = Number.POSITIVE_INFINITY;
  /** The timer was set to fire at once (its time had come when armed). */
  private timerAtOnce = false;
  private ticking: Promise<void> | null = null;
  private tickAgain = false;

  constructor(private readonly engine: Engine) {}

  /** True while a pass runs. */
  get busy(): boolean {
    return this.ticking !== null;
  }

  /** Arms the timer for a wait with a deadline held in memory. */
  watch(wait: Wait): void {
    this.timed.add(wait);
    if (wait.deadline !== null && wait.deadline < this.timerAt) this.arm(wait.deadline);
  }

  unwatch(wait: Wait): void {
    this.timed.delete(wait);
  }

  /** Runs a pass at `at` (or sooner, if already armed sooner). */
  arm(at: number): void {
    const { clock } = this.engine;
    if (this.engine.closed) return;
    // Already armed at or before `at`. A due time re-arms (a fake clock may have jumped past a timer set to wait)
    // unless the timer is already set to fire at once: every finished run pokes, and 1,000 finishing in one turn
    // made 1,000 timers.
    if (at >= this.timerAt && (at > clock.now() || this.timerAtOnce)) return;
    if (this.timer) clearTimeout(this.timer);
    this.timerAt = at;
    const delay = Math.min(Math.max(0, at - clock.now()), 2_000_000_000);
    this.timerAtOnce = delay === 0;
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

  /** Clears the timer and waits for a pass under way (the engine is closed: no new pass starts). */
  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    if (this.ticking) await this.ticking.catch(() => {});
  }

  private async tickLoop(): Promise<void> {
    do {
      this.tickAgain = false;
      try {
        await this.tickOnce();
      } catch (err) {
        if (this.engine.closed) return;
        this.engine.reportStorageError(err);
        this.arm(this.engine.clock.now() + 1000);
        return;
      }
    } while (this.tickAgain && !this.engine.closed);
  }

  private async tickOnce(): Promise<void> {
    const e = this.engine;
    if (e.closed) return;
    const now = e.clock.now();
    let next = Number.POSITIVE_INFINITY;
    for (const w of this.timed) {
      if (w.deadline! <= now) {
        w.exec.release(w);
        w.resolve();
      } else if (w.deadline! < next) next = w.deadline!;
    }
    await e.changes.notice();
    if (e.executes) {
      await this.resumeFaulted(now);
      await this.claimDue(now);
      const due = await e.schedules.pass(now);
      if (due < next) next = due;
      const prune = await e.pruner.pass(now);
      if (prune < next) next = prune;
    }
    for (const at of this.faulted.values()) if (at < next) next = at;
    const stored = e.executes ? await e.store.nextWakeAt([...e.defs.keys()]) : null;
    if (stored !== null && stored < next) next = stored;
    if (Number.isFinite(next)) this.arm(Math.max(next, now + 1));
  }

  /** Claims due runs while there is room, applies their requests and starts the others. */
  private async claimDue(now: number): Promise<void> {
    const e = this.engine;
    for (;;) {
      const room = e.maxActive - e.active.size;
      if (room <= 0) break;
      // Modest chunks, so engines sharing a database share the runs a burst of messages wakes.
      const limit = Math.min(room, 100);
      const claimed = await e.store.claimDue(now, e.owner, now + e.leaseMs, limit, [...e.defs.keys()]);
      if (claimed.length === 0) break;
      e.metrics.tookOver(claimed.filter((r) => r.takenFrom !== null).length);
      try {
        // Ours already (its lease lapsed while we ran it, e.g. a blocked event loop): the claim renewed it.
        const resume = await e.requests.applyOnClaimAll(
          claimed.filter((run) => !e.active.has(run.id) && !e.loading.has(run.id)),
        );
        // Messages this process sends while these runs load are kept for them (see send()).
        for (const id of resume) e.loading.set(id, []);
        try {
          for (const l of await e.store.loadRuns(resume, { packed: true })) {
            e.begin(l.run, l.entries, l.messages, l.packed);
            e.events.emit({
              type: "run",
              runId: l.run.id,
              workflow: l.run.workflow,
              key: l.run.key,
              status: "running",
            });
          }
        } finally {
          for (const id of resume) e.loading.delete(id);
        }
      } catch (err) {
        // Claimed (ours in the database) but not running here: keep their leases and load them again
        // shortly, as for a failed commit; otherwise nobody would run them until their lease lapsed.
        const retryAt = e.clock.now() + 1000;
        for (const run of claimed) if (!e.active.has(run.id)) this.faulted.set(run.id, retryAt);
        throw err;
      }
      if (claimed.length < limit) break;
    }
  }

  private async resumeFaulted(now: number): Promise<void> {
    const e = this.engine;
    const due = [...this.faulted].filter(([, at]) => at <= now).map(([id]) => id);
    if (due.length === 0) return;
    const loaded = await e.store.loadRuns(due);
    for (const id of due) this.faulted.delete(id);
    for (const l of loaded) {
      if (l.run.owner === e.owner && !e.active.has(l.run.id)) e.begin(l.run, l.entries, l.messages);
    }
  }
}
