// Requests about runs written by other processes (an attached MCP server, a CLI): cancel, replay.
// The process that holds (or claims) a run carries them out.

import { type RequestRow, type RunRow, TERMINAL_STATUSES } from "../storage/store.js";
import type { Engine } from "./engine.js";

export class Requests {
  constructor(private readonly engine: Engine) {}

  /**
   * Applies the pending requests of a run this process just claimed.
   * Returns true when the run must not be resumed (cancelled, or finished and only claimed for a request).
   */
  async applyOnClaim(run: RunRow): Promise<boolean> {
    const e = this.engine;
    const pending = await e.store.pendingRequests([run.id], 100);
    let stop = TERMINAL_STATUSES.includes(run.status);
    for (const r of pending) {
      if (r.kind === "cancel" && !stop) {
        await e.cancelClaimed(run);
        stop = true;
      } else if (r.kind === "replay") {
        stop = !(await e.applyReplayRequest(run, r));
      }
      e.writes.requestDone(r.id);
    }
    if (stop) {
      e.writes.patch({ id: run.id, owner: null, leaseUntil: null, wakeAt: null }, e.owner);
      await e.writes.flush();
    }
    return stop;
  }

  /** Applies requests about runs executing here: a cancel stops them; a replay is refused while they run. */
  async applyToActive(runIds: number[]): Promise<void> {
    const e = this.engine;
    const pending: RequestRow[] = await e.store.pendingRequests(runIds, 100);
    for (const r of pending) {
      if (r.kind === "cancel") await e.cancel(r.runId);
      e.writes.requestDone(r.id);
    }
    if (pending.length) await e.writes.flush();
  }
}
