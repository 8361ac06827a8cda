// The errors of rollback handlers: a handler on a step before any checkpoint, and a handler that failed.

import { divergence } from "./divergence.js";
import { sentence, WaymarkError } from "./errors.js";

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
  /**
   * Set when the failed handler is one the code no longer reaches (code drift): the steps still to undo
   * whose handlers are unknown for that reason, the next to undo first.
   */
  unreachable?: string[];
}

/** Characters of the cause's own message a ROLLBACK_FAILED message repeats. */
const CAUSE_CHARS = 300;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** "reserve-car", '"a", "b" and "c"'. */
function names(paths: string[]): string {
  const q = paths.map((p) => JSON.stringify(p));
  return q.length < 2 ? q.join("") : `${q.slice(0, -1).join(", ")} and ${q.at(-1)}`;
}

/** A run failed (or was cancelled with rollback), and then a rollback handler failed after its retries. */
export class RollbackFailedError extends WaymarkError {
  constructor(
    run: string,
    cause: { name: string; message: string; details?: unknown },
    failure: RollbackFailure,
  ) {
    const details = cause.details as
      | {
          step?: unknown;
          cause?: { name?: unknown; message?: unknown };
          ordinal?: unknown;
          scope?: unknown;
          recorded?: { kind: string; name: string } | null;
          requested?: { kind: string; name: string } | null;
        }
      | undefined;
    const at = details?.step;
    // The cause's own words (a step's error, not the StepFailedError around it), bounded.
    const inner =
      typeof details?.cause?.message === "string"
        ? `${String(details.cause.name ?? "Error")}: ${details.cause.message}`
        : `${cause.name}: ${cause.message}`;
    const why = sentence(clip(inner, CAUSE_CHARS)).replace(/\.$/, "");
    const handler = sentence(`${failure.error.name}: ${clip(failure.error.message, 1000)}`);
    const drifted =
      (cause as { code?: unknown }).code === "HISTORY_DIVERGED" &&
      failure.unreachable?.length &&
      typeof details?.ordinal === "number";
    let message: string;
    if (drifted) {
      const where =
        typeof details.scope === "string" && details.scope ? `scope "${details.scope}"` : "the root scope";
      const old = details.recorded?.name;
      message = `Run "${run}" no longer matches its history at entry #${(details.ordinal as number) + 1} of ${where} (${divergence(details.recorded ?? null, details.requested ?? null, "asked")}), so its rollback could not run the handler${failure.unreachable!.length === 1 ? "" : "s"} of ${names(failure.unreachable!)} (the code no longer reaches ${failure.unreachable!.length === 1 ? "it" : "them"}); ${failure.undone} of ${failure.total} steps undone. Restore the code's old path there${old ? ` (the step's old name "${old}", ctx.removed("${old}") where it stood, or a new workflow version)` : " (or register the change as a new workflow version)"}, then replay the run: the replay runs the remaining handlers, never those that finished.`;
    } else {
      message = `Run "${run}" ${typeof at === "string" ? `failed at ${at} (${why})` : `stopped (${why})`}; ${failure.undone} of ${failure.total} steps undone, the rollback handler of step "${failure.step}" failed after ${failure.attempts} attempt${failure.attempts === 1 ? "" : "s"}: ${handler} Fix the handler (or what it calls), then replay the run: the replay retries that handler and the remaining ones, never those that finished.`;
    }
    super("ROLLBACK_FAILED", message, { run, cause, rollback: failure });
  }
}
