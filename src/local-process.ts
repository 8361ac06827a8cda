// Lease owners are `host:pid:random`. On the owner's own machine we can tell whether it still runs.

import os from "node:os";

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
