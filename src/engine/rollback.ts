// Rollback handlers of one executing run: which completed steps carry an undo, and undoing them, latest
// completed first, each handler recorded as an entry in scope "~rollback" (attempts, retries, errors).
//
// IMPORTANT: a step's place in the order of completion is recorded with the step (detail.rollback.order),
// so what is to undo follows from history alone. A handler entry that completed is never run again; one
// that was running when the process died runs again (at-least-once, like a step), its attempt interrupted.
// The handlers themselves are the code's: an execution learns them as its code passes the steps (live or
// replayed), so a rollback resumed after a crash replays the code first (see RunExecution's undo mode).

import { divergence } from "../divergence.js";
import type { RollbackFailure } from "../rollback-errors.js";
import type { RollbackContext, RollbackHandler, StepOptions } from "../workflow.js";
import { afterClock } from "./clock.js";
import {
  type Attempt,
  attemptsGoingOn,
  detailOf,
  type EntryOf,
  entryPath,
  ROLLBACK_SCOPE,
  setDetail,
} from "./entries.js";
import type { RunExecution } from "./execution.js";
import { Scope } from "./history.js";
import { Abandoned } from "./signals.js";
import { backoffDelay, policyOf } from "./step.js";
import { attemptThrew, isFatal, raceTimeout } from "./step-attempt.js";

interface Registered {
  handler: RollbackHandler;
  options: StepOptions | undefined;
}

/** A completed step to undo, and its handler's entry if one was recorded before. */
interface Target {
  step: EntryOf<"step">;
  order: number;
  undo: EntryOf<"rollback"> | undefined;
}

/** Where a HistoryDivergedError that caused the rollback says the code left the run's history, or null. */
function driftOf(
  cause: Error,
): { ordinal: number; where: string; differs: string; recorded: string | null } | null {
  const c = cause as Error & { code?: unknown; details?: Record<string, unknown> };
  if (c.code !== "HISTORY_DIVERGED" || !c.details) return null;
  const d = c.details as {
    scope?: string;
    ordinal?: number;
    recorded?: { kind: string; name: string } | null;
    requested?: { kind: string; name: string } | null;
  };
  if (typeof d.ordinal !== "number") return null;
  return {
    ordinal: d.ordinal,
    where: !d.scope ? "the root scope" : `scope "${d.scope}"`,
    differs: divergence(d.recorded ?? null, d.requested ?? null, "asked"),
    recorded: d.recorded?.name ?? null,
  };
}

export class Rollbacks {
  private readonly handlers = new Map<number, Registered>();
  /** The latest place in the order recorded so far; read from history when a step first takes the next. */
  private order: number | null = null;
  private scope: Scope | null = null;

  constructor(private readonly exec: RunExecution) {}

  private lastOrder(): number {
    let last = 0;
    for (const e of this.exec.history.all()) {
      if (e.kind !== "step" || e.detail === null) continue;
      const order = detailOf(e)?.rollback?.order;
      if (order !== undefined && order > last) last = order;
    }
    return last;
  }

  /** A completed step with a handler was replayed: its handler is known again (if it was recorded with one). */
  replayed(row: EntryOf<"step">, handler: RollbackHandler<any>, options: StepOptions | undefined): void {
    if (detailOf(row)?.rollback) this.handlers.set(row.seq, { handler, options });
  }

  /** A step with a handler completes now: it takes the next place in the order (recorded with it). */
  completed(row: EntryOf<"step">, handler: RollbackHandler<any>, options: StepOptions | undefined): void {
    this.order = (this.order ?? this.lastOrder()) + 1;
    setDetail(row, { ...(detailOf(row) ?? {}), rollback: { order: this.order } });
    this.handlers.set(row.seq, { handler, options });
  }

  /** The completed steps whose undo has not completed, latest completed first. */
  private targets(): Target[] {
    const undos = new Map<number, EntryOf<"rollback">>();
    const steps: Array<{ step: EntryOf<"step">; order: number }> = [];
    for (const e of this.exec.history.all()) {
      if (e.kind === "rollback") {
        const d = detailOf(e);
        if (d) undos.set(d.stepSeq, e);
      } else if (e.kind === "step" && e.status === "completed") {
        const order = detailOf(e)?.rollback?.order;
        if (order !== undefined) steps.push({ step: e, order });
      }
    }
    return steps
      .sort((a, b) => b.order - a.order)
      .map((s) => ({ ...s, undo: undos.get(s.step.seq) }))
      .filter((t) => t.undo?.status !== "completed");
  }

  /** True when some completed step still has its undo to run. */
  get due(): boolean {
    return this.targets().length > 0;
  }

  /** How many steps were recorded with a handler, and how many of them are undone. */
  counts(): { total: number; undone: number } {
    let total = 0;
    let undone = 0;
    for (const e of this.exec.history.all()) {
      if (e.kind === "step" && e.status === "completed" && detailOf(e)?.rollback) total++;
      if (e.kind === "rollback" && e.status === "completed") undone++;
    }
    return { total, undone };
  }

  /**
   * Runs every handler still due, latest completed step first; stops at the first that fails after its
   * retries and returns what failed (null when all are undone). Throws Abandoned if the execution stops.
   */
  async run(cause: Error): Promise<RollbackFailure | null> {
    const targets = this.targets();
    for (const t of targets) {
      const failed = await this.undo(t, cause);
      if (!failed) continue;
      // The steps still to undo whose handlers this execution does not know (the code no longer reaches them).
      const unreachable = failed.missing
        ? targets
            .filter((x) => x.order <= t.order && !this.handlers.has(x.step.seq))
            .map((x) => entryPath(x.step.scope, x.step.name))
        : undefined;
      const { missing: _, ...rest } = failed;
      return { ...rest, ...this.counts(), ...(unreachable ? { unreachable } : {}) };
    }
    return null;
  }

  private rollbackScope(): Scope {
    this.scope ??= new Scope(ROLLBACK_SCOPE, this.exec.history.scope(ROLLBACK_SCOPE), null);
    return this.scope;
  }

  /** Runs one step's handler to its end (completed, or failed after its retries). */
  private async undo(
    t: Target,
    cause: Error,
  ): Promise<(Omit<RollbackFailure, "undone" | "total"> & { missing?: true }) | null> {
    const exec = this.exec;
    const clock = exec.core.clock;
    const path = entryPath(t.step.scope, t.step.name);
    const scope = this.rollbackScope();
    const row = t.undo ?? exec.newEntry(scope, scope.entries.length, path, "rollback", "running");
    if (!t.undo) setDetail(row, { step: path, stepSeq: t.step.seq, order: t.order });
    const attempts = attemptsGoingOn(row);
    const registered = this.handlers.get(t.step.seq);
    if (!registered) {
      const now = clock.now();
      const drift = driftOf(cause);
      const error = {
        name: "RollbackHandlerMissing",
        message: drift
          ? `The code no longer reaches step "${path}": it diverged from the run's history before it, at entry #${drift.ordinal + 1} of ${drift.where} (${drift.differs}), so the step's rollback handler is unknown. Restore the code's old path there${drift.recorded ? ` (the old name "${drift.recorded}", or ctx.removed("${drift.recorded}"), or a new workflow version)` : ""}, then replay the run: the replay runs this handler and the remaining ones.`
          : `The code did not reach step "${path}" on this execution, so its rollback handler is unknown (the code changed, or drifted before that step). Restore the step in the code, or replay the run from an earlier entry.`,
      };
      attempts.push({ n: attempts.length + 1, startedAt: now, endedAt: now, status: "failed", error });
      return { ...(await this.failed(row, attempts, path, error)), missing: true };
    }
    const policy = policyOf(registered.options, path);
    const output = t.step.output === null ? undefined : JSON.parse(t.step.output);
    for (;;) {
      if (row.status === "retrying") {
        const at = attempts.at(-1)?.retryAt ?? 0;
        if (at > clock.now())
          await new Promise<void>((resolve) => afterClock(clock, at - clock.now(), resolve));
        if (exec.dead) throw new Abandoned();
      }
      const attempt: Attempt = { n: attempts.length + 1, startedAt: clock.now(), status: "running" };
      attempts.push(attempt);
      row.status = "running";
      exec.mark(row, attempts);
      try {
        await this.call(registered.handler, output, path, attempt.n, policy.timeout, cause);
        if (exec.dead) throw new Abandoned();
        attempt.status = "completed";
        attempt.endedAt = clock.now();
        row.status = "completed";
        row.endedAt = attempt.endedAt;
        row.attempts = JSON.stringify(attempts);
        await exec.commitEntry(row);
        return null;
      } catch (err) {
        if (exec.dead || err instanceof Abandoned) throw new Abandoned();
        const endedAt = clock.now();
        const info = attemptThrew(attempt, err, endedAt);
        if (isFatal(err) || attempt.n >= policy.maxAttempts) return this.failed(row, attempts, path, info);
        attempt.retryAt = endedAt + backoffDelay(policy, attempt.n, exec.core.random());
        row.status = "retrying";
        row.attempts = JSON.stringify(attempts);
        await exec.commitEntry(row);
      }
    }
  }

  private async failed(
    row: EntryOf<"rollback">,
    attempts: Attempt[],
    path: string,
    error: { name: string; message: string },
  ): Promise<Omit<RollbackFailure, "undone" | "total">> {
    const at = this.exec.core.clock.now();
    row.status = "failed";
    row.endedAt = at;
    row.attempts = JSON.stringify(attempts);
    row.error = JSON.stringify({ name: error.name, message: error.message });
    await this.exec.commitEntry(row);
    return { step: path, attempts: attempts.length, error: { name: error.name, message: error.message } };
  }

  /** One attempt of a handler, with its own signal (fired by a timeout or when the execution stops). */
  private async call(
    handler: RollbackHandler,
    output: unknown,
    path: string,
    attempt: number,
    timeout: number | null,
    cause: Error,
  ): Promise<void> {
    const exec = this.exec;
    const controller = new AbortController();
    exec.controllers.add(controller);
    const rb: RollbackContext = {
      error: cause,
      signal: controller.signal,
      attempt,
      step: path,
      key: exec.key,
      workflow: exec.workflow,
    };
    try {
      const work = Promise.resolve().then(() => handler(rb, output));
      if (timeout === null) await work;
      else await raceTimeout(work, timeout, path, attempt, (err) => controller.abort(err));
    } finally {
      exec.controllers.delete(controller);
    }
  }
}
