// The errors of rollback handlers: a handler on a step before any checkpoint, and a handler that failed.

import { WaymarkError } from "./errors.js";

/** A step with a rollback handler was reached before any ctx.rollbackCheckpoint in its scope or above. */
export class RollbackNotArmedError extends WaymarkError {
  constructor(run: string, step: string) {
    super(
      "ROLLBACK_NOT_ARMED",
      `Step "${step}" of run "${run}" has a rollback handler, but no rollback checkpoint was reached before it. Call \`await ctx.rollbackCheckpoint("name")\` before the first step whose work may need undoing (in the same scope or an enclosing one), or drop the step's rollback option.`,
      { run, step },
    );
  }
}

/** What a failed rollback says about what was undone: counts and the step whose handler failed. */
export interface RollbackFailure {
  /** Path of the step whose handler failed. */
  step: string;
  attempts: number;
  error: { name: string; message: string };
  undone: number;
  total: number;
}

/** A run failed (or was cancelled with rollback), and then a rollback handler failed after its retries. */
export class RollbackFailedError extends WaymarkError {
  constructor(
    run: string,
    cause: { name: string; message: string; details?: unknown },
    failure: RollbackFailure,
  ) {
    const at = (cause.details as { step?: unknown } | undefined)?.step;
    super(
      "ROLLBACK_FAILED",
      `Run "${run}" ${typeof at === "string" ? `failed at ${at}` : `stopped (${cause.name}: ${cause.message})`}; ${failure.undone} of ${failure.total} steps undone, the rollback handler of step "${failure.step}" failed after ${failure.attempts} attempt${failure.attempts === 1 ? "" : "s"}: ${failure.error.name}: ${failure.error.message}. Fix the handler (or what it calls), then replay the run: the replay retries that handler and the remaining ones, never those that finished.`,
      { run, cause, rollback: failure },
    );
  }
}
