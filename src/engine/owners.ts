// Lease owners: who this process is, and which owners are processes of this machine that have died.

import os from "node:os";
import { deadLocalPid } from "../local-process.js";
import type { Store } from "../storage/store.js";

/** `host:pid:random`: enough to tell a dead process of this machine from a live one elsewhere. */
export function makeOwnerId(): string {
  return `${os.hostname()}:${process.pid}:${Math.random().toString(36).slice(2, 8)}`;
}

/** Expires the leases of owners that were processes of this machine and no longer exist; returns how many runs. */
export async function expireDeadOwners(store: Store, me: string, now: number): Promise<number> {
  let expired = 0;
  for (const { owner } of await store.owners()) {
    if (owner !== me && deadLocalPid(owner) !== null) expired += await store.expireOwner(owner, now);
  }
  return expired;
}
