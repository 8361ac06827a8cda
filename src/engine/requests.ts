// Requests about runs written by other processes (an attached MCP server, a CLI): cancel, replay.
// The process that holds (or claims) a run carries them out and records what happened.

import { type RequestRow, type RunRow, TERMINAL_STATUSES } from "../storage/store.js";
import { cancelClaimed, rollBackClaimed } from "./cancel.js";
import type { Engine } from "./engine.js";
import { type ReplayOptions, replayRun } from "./replay.js";

/** True for a cancel request that asks for rollback. */
function withRollback(r: RequestRow): boolean {
  try {
    return (JSON.parse(r.args) as { rollback?: unknown }).rollback === true;
  } catch {
    return false;
  }
}

/**
 * Who asked, as recorded with the request: "(a request from another process)" only when another process
 * wrote it (an in-process engine.cancel of a run it was not executing is a request to itself).
 */
function requestedBy(r: RequestRow, owner: string): string {
  try {
    const args = JSON.parse(r.args) as { by?: unknown; owner?: unknown };
    const by = typeof args.by === "string" && args.by ? args.by : null;
    if (args.owner === owner) return by ?? "this process";
    if (by) return `${by} (a request from another process)`;
  } catch {
    // fall through
  }
  return "a request from another process";
}

export class Requests {
  constructor(private readonly engine: Engine) {}

  /**
   * Applies the pending requests of runs this process just claimed, read for all of them at once, and
   * returns the ids of those to resume; the write queue is flushed once, before they load. A run with no
   * request that is not finished needs no write of its own: a restart claiming thousands of runs must not
   * read and flush once per run (each flush committed the first record of the run resumed just before:
   * 10,000 resumed runs made 10,000 commits; now one per chunk).
   */
  async applyOnClaimAll(runs: RunRow[]): Promise<number[]> {
    if (runs.length === 0) return [];
    const byRun = new Map<number, RequestRow[]>();
    for (const r of await this.engine.store.pendingRequests(
      runs.map((run) => run.id),
      100,
    )) {
      const list = byRun.get(r.runId);
      if (list) list.push(r);
      else byRun.set(r.runId, [r]);
    }
    const resume: number[] = [];
    for (const run of runs) {
      const pending = byRun.get(run.id);
      if (!pending && !TERMINAL_STATUSES.includes(run.status)) resume.push(run.id);
      else if (!(await this.applyOnClaim(run, pending?.slice(0, 100) ?? []))) resume.push(run.id);
    }
    await this.engine.writes.flush();
    return resume;
  }

  /**
   * Applies the pending requests of a run this process just claimed (`given`: read here when not given).
   * Returns true when the run must not be resumed now (cancelled, replayed and released, or finished).
   */
  async applyOnClaim(run: RunRow, given?: RequestRow[]): Promise<boolean> {
    const e = this.engine;
    const pending = given ?? (await e.store.pendingRequests([run.id], 100));
    let outcome: "resume" | "released" | "stop" = TERMINAL_STATUSES.includes(run.status) ? "stop" : "resume";
    for (const r of pending) {
      if (r.kind === "cancel" && withRollback(r)) {
        // Resumed rolling-back: its code replays to learn the handlers, then they run (execution.ts).
        if (outcome === "resume") rollBackClaimed(e, run, requestedBy(r, e.owner));
        e.writes.requestDone(r.id, { ok: true, status: outcome === "resume" ? "rolling-back" : run.status });
      } else if (r.kind === "cancel") {
        if (outcome !== "stop") await cancelClaimed(e, run, requestedBy(r, e.owner));
        outcome = "stop";
        e.writes.requestDone(r.id, { ok: true, status: "cancelled" });
      } else if (r.kind === "replay") {
        e.writes.requestDone(r.id, await this.replay(run, r));
        if ((await e.store.getRun(run.id))?.status === "pending") outcome = "released";
      } else {
        e.writes.requestDone(r.id, { ok: false, error: `Unknown request kind "${r.kind}".` });
      }
    }
    if (outcome === "stop")
      e.writes.patch({ id: run.id, owner: null, leaseUntil: null, wakeAt: null }, e.owner);
    await e.writes.flush();
    return outcome !== "resume";
  }

  private async replay(run: RunRow, request: RequestRow): Promise<unknown> {
    const e = this.engine;
    try {
      await e.writes.flush();
      const args = JSON.parse(request.args) as ReplayOptions;
      const plan = await replayRun(e, run.id, { ...args, dryRun: false });
      return { ok: true, plan };
    } catch (err) {
      return {
        ok: false,
        error: err instanceof Error ? err.message : String(err),
        code: (err as { code?: string }).code,
      };
    }
  }

  /** Applies requests about runs executing here: a cancel stops them; a replay is refused while they run. */
  async applyToActive(runIds: number[]): Promise<void> {
    const e = this.engine;
    const pending: RequestRow[] = await e.store.pendingRequests(runIds, 100);
    for (const r of pending) {
      if (r.kind === "cancel") {
        const status = await e.cancel(r.runId, { by: requestedBy(r, e.owner), rollback: withRollback(r) });
        e.writes.requestDone(r.id, { ok: true, status });
      } else {
        e.writes.requestDone(r.id, {
          ok: false,
          code: "RUN_BUSY",
          error:
            "The run was executing when the request arrived; wait until it is waiting, sleeping or finished, then ask again.",
        });
      }
    }
    if (pending.length) await e.writes.flush();
  }
}
