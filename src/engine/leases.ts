// The lease keeper: renews the leases of the runs this process holds (a heartbeat every third of the lease),
// stops executing a run whose lease another process took, and takes dead owners' runs over.
//
// IMPORTANT: until `safeUntil` every run this process holds has a lease valid for at least a third of the
// lease length more (claims and renewals set lease_until = now + leaseMs), so commits skip the lease check.

import type { Engine } from "./engine.js";
import { expireDeadOwners } from "./owners.js";

export class LeaseKeeper {
  private heartbeat: NodeJS.Timeout | null = null;
  private safeUntil = 0;

  constructor(
    private readonly engine: Engine,
    /** How long a lease lasts without renewal (ms). */
    readonly leaseMs: number,
  ) {}

  /** True when a commit must check its run's lease in the database. */
  get mustCheck(): boolean {
    return this.engine.clock.now() >= this.safeUntil;
  }

  /** Starts the heartbeat (only a process that executes runs holds leases). */
  start(executes: boolean): void {
    if (executes) {
      this.heartbeat = setInterval(() => void this.renew(), Math.max(10, Math.floor(this.leaseMs / 3)));
    }
    this.safeUntil = this.engine.clock.now() + Math.floor((this.leaseMs * 2) / 3);
  }

  stop(): void {
    if (this.heartbeat) clearInterval(this.heartbeat);
    this.heartbeat = null;
  }

  /** One pass of the heartbeat (start() repeats it; tests call it as they call tick()). */
  async renew(): Promise<void> {
    const e = this.engine;
    if (e.closed) return;
    try {
      const at = e.clock.now();
      // Only the runs this process really holds: one it claimed but lost track of expires and is claimed again.
      const held = [...e.active.keys(), ...e.loading.keys(), ...e.scheduler.faulted.keys()];
      const renewed = new Set(await e.store.renewLeases(e.owner, at + this.leaseMs, held));
      // A lease not renewed is another process's now (it took the run over): stop executing the run
      // here before trusting the leases left, so nothing of it is written from this process again.
      for (const id of held) if (!renewed.has(id)) this.leaseGone(id);
      this.safeUntil = at + Math.floor((this.leaseMs * 2) / 3);
      e.deadOwnersExpired(await expireDeadOwners(e.store, e.owner, e.clock.now()));
    } catch (err) {
      e.reportStorageError(err);
    }
  }

  /** Stops executing a run whose lease this process no longer holds. */
  private leaseGone(runId: number): void {
    const e = this.engine;
    e.scheduler.faulted.delete(runId);
    const exec = e.active.get(runId);
    // One that is ending or suspending released its lease itself; it leaves `active` on its own.
    if (!exec || exec.dead) return;
    exec.stop();
    e.active.delete(runId);
  }
}
