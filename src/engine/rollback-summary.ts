// What a run's rollback did, worked out from its history alone (pure): which steps carry an undo, which are
// undone, which not, whose handler failed; with the sentence get_run, the inspector and diagnosis show.

import type { ErrorInfo } from "./error-info.js";

/** The parts of a history entry (views.ts HistoryEntry) this reads. */
interface EntryLike {
  id: number;
  path: string;
  name: string;
  kind: string;
  status: string;
  detail?: Record<string, unknown>;
  error?: ErrorInfo;
}

/** A run's rollback as history records it. */
export interface RollbackSummary {
  /** Path of the step the run failed at (the cause), or null (a cancel, code drift, an error outside steps). */
  failedAt: string | null;
  /** Completed steps that carry a rollback handler. */
  total: number;
  /** Steps undone (their handler completed), in the order they were undone. */
  undone: string[];
  /** Steps with a handler not undone yet, the next to undo first. */
  notUndone: string[];
  /** The step whose handler failed after its retries, and how, or null. */
  failed: { step: string; error: string } | null;
  /** E.g. "failed at capture-payment; 2 of 3 steps undone, reserve-flight failed to undo". */
  text: string;
}

/** The step a run's error names as where it failed (a rollback failure names its cause's). */
function failedStep(error: ErrorInfo | null): string | null {
  if (!error) return null;
  const cause = error.code === "ROLLBACK_FAILED" ? (error.details?.cause as ErrorInfo | undefined) : error;
  const step = cause?.details?.step;
  return typeof step === "string" ? step : null;
}

/** The entry where code drift that caused the rollback left the run's history ("s2"), or null. */
function driftedAt(error: ErrorInfo | null): string | null {
  const cause = error?.code === "ROLLBACK_FAILED" ? (error.details?.cause as ErrorInfo | undefined) : error;
  if (cause?.code !== "HISTORY_DIVERGED") return null;
  const d = cause.details as { scope?: unknown; recorded?: { name?: unknown } | null } | undefined;
  const name = d?.recorded?.name;
  if (typeof name !== "string") return null;
  return typeof d?.scope === "string" && d.scope ? `${d.scope}/${name}` : name;
}

/** The rollback of a failed, cancelled or rolling-back run from its entries; null when no completed step carries a handler. */
export function rollbackSummary(
  entries: readonly EntryLike[],
  status: string,
  error: ErrorInfo | null,
): RollbackSummary | null {
  const steps: Array<{ id: number; path: string; order: number }> = [];
  const undos = new Map<number, EntryLike>();
  for (const e of entries) {
    if (e.kind === "step" && e.status === "completed") {
      const order = (e.detail?.rollback as { order?: number } | undefined)?.order;
      if (typeof order === "number") steps.push({ id: e.id, path: e.path, order });
    } else if (e.kind === "rollback") {
      const stepSeq = e.detail?.stepSeq;
      if (typeof stepSeq === "number") undos.set(stepSeq, e);
    }
  }
  if (steps.length === 0 || !["failed", "cancelled", "rolling-back"].includes(status)) return null;
  steps.sort((a, b) => b.order - a.order);
  const undone = steps.filter((s) => undos.get(s.id)?.status === "completed").map((s) => s.path);
  const notUndone = steps.filter((s) => undos.get(s.id)?.status !== "completed").map((s) => s.path);
  const bad = steps.map((s) => undos.get(s.id)).find((u) => u?.status === "failed");
  const failed = bad
    ? { step: bad.name, error: bad.error ? `${bad.error.name}: ${bad.error.message}` : "failed" }
    : null;
  const at = failedStep(error);
  const drift = driftedAt(error);
  const head =
    status === "cancelled" || error?.code === "RUN_CANCELLED"
      ? "cancelled"
      : at
        ? `failed at ${at}`
        : drift
          ? `code drift at ${drift}`
          : error
            ? `failed (${error.code ?? error.name})`
            : status;
  let text = `${head}; ${undone.length} of ${steps.length} steps undone`;
  if (failed && bad?.error?.name === "RollbackHandlerMissing")
    text += `, ${failed.step} could not be undone (the code no longer reaches it, so its handler is unknown)`;
  else if (failed) text += `, ${failed.step} failed to undo (${failed.error})`;
  else if (status === "rolling-back")
    text += `, rolling back${notUndone[0] ? ` (next: ${notUndone[0]})` : ""}`;
  if (notUndone.length && (failed || status !== "rolling-back"))
    text += `; not undone: ${notUndone.join(", ")}`;
  return { failedAt: at, total: steps.length, undone, notUndone, failed, text };
}
