// Lease owners: who this process is, and which owners are processes of this machine that have died.

import os from "node:os";
import type { Store } from "../storage/store.js";

/** `host:pid:random`: enough to tell a dead process of this machine from a live one elsewhere. */
export function makeOwnerId(): string {
  return `${os.hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/** The pid of an owner that was a process of this machine and no longer exists; null otherwise. */
export function deadLocalPid(owner: string): number | null {
  const [host, pid] = owner.split(":");
  if (host !== os.hostname() || !pid || !/^\d+$/.test(pid)) return null;
  return pidAlive(Number(pid)) ? null : Number(pid);
}

/** Expires the leases of owners that were processes of this machine and no longer exist; returns how many runs. */
export async function expireDeadOwners(store: Store, me: string, now: number): Promise<number> {
  let expired = 0;
  for (const { owner } of await store.owners()) {
    if (owner !== me && deadLocalPid(owner) !== null) expired += await store.expireOwner(owner, now);
  }
  return expired;
}
