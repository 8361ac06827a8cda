// Evidence about one step: its error, the user-code frame that threw, every attempt, its input and state.

import type { Attempt } from "../engine/entries.js";
import type { ErrorInfo } from "../engine/error-info.js";
import type { HistoryEntry } from "../engine/views.js";
import type { RunFacts } from "./facts.js";
import { brief, causeOf, cut, errorLine, iso, span } from "./format.js";
import { normaliseMessage } from "./signatures.js";
import { type Frame, frameText, topUserFrame } from "./stack.js";
import type { Evidence } from "./types.js";

/** How a step's error reads: an outside service failing, a bug in code, or something else. */
export type CauseKind = "outside" | "bug" | "other";

const OUTSIDE =
  /\b(?:50[0-4]|429)\b|ECONN\w*|ETIMEDOUT|EAI_AGAIN|ENOTFOUND|EPIPE|socket hang up|unavailable|rate.?limit|fetch failed|network/i;
const BUGS = new Set(["TypeError", "ReferenceError", "SyntaxError", "RangeError"]);

/** Reads an error as an outside service failing, a bug in code (TypeError...), or neither. */
export function causeKind(error: Pick<ErrorInfo, "name" | "message"> | null): CauseKind {
  if (!error) return "other";
  if (BUGS.has(error.name)) return "bug";
  if (OUTSIDE.test(error.message) || OUTSIDE.test(error.name)) return "outside";
  return "other";
}

/** The attempts that ended in an error. */
export function failedAttempts(entry: HistoryEntry): Attempt[] {
  return (entry.attempts ?? []).filter((a) => a.error !== undefined && a.status !== "interrupted");
}

/** The error a step's latest failed attempt (or the entry itself) recorded, as originally thrown. */
export function latestError(entry: HistoryEntry): ErrorInfo | null {
  const last = [...(entry.attempts ?? [])].reverse().find((a) => a.error);
  return last?.error ?? causeOf(entry.error);
}

/** The top user-code frame of a step's error, from the cause's stack or any attempt's. */
export function stepFrame(entry: HistoryEntry): Frame | null {
  const stacks = [
    causeOf(entry.error)?.stack,
    ...[...(entry.attempts ?? [])].reverse().map((a) => a.error?.stack),
  ];
  for (const s of stacks) {
    const f = topUserFrame(s);
    if (f) return f;
  }
  return null;
}

function attemptFact(a: Attempt, finalMessage: string | null): string {
  const took = a.endedAt !== undefined ? ` after ${span(a.endedAt - a.startedAt)}` : "";
  const backoff =
    a.retryAt !== undefined && a.endedAt !== undefined ? `, backoff ${span(a.retryAt - a.endedAt)}` : "";
  const same =
    a.error && finalMessage !== null && normaliseMessage(a.error.message) === normaliseMessage(finalMessage);
  const msg = a.error && !same ? `: ${cut(a.error.message, 80)}` : "";
  return `#${a.n} ${a.status} at ${iso(a.startedAt)}${took}${backoff}${msg}`;
}

/**
 * Evidence for a failed or retrying step: its error, the frame that threw, its attempts (the first and
 * last when there are more than `maxAttempts`), and with `data` its input and the state it saw.
 */
export async function stepEvidence(
  facts: RunFacts,
  entry: HistoryEntry,
  options: { maxAttempts?: number; data?: boolean } = {},
): Promise<Evidence[]> {
  const max = options.maxAttempts ?? 4;
  const out: Evidence[] = [];
  const attempts = entry.attempts ?? [];
  const error = latestError(entry);
  const lastFailed = [...attempts].reverse().find((a) => a.error);
  out.push({
    kind: "error",
    fact: errorLine(error, 220) ?? "no error recorded",
    entry: entry.id,
    ...(lastFailed ? { attempt: lastFailed.n } : {}),
  });
  const frame = stepFrame(entry);
  if (frame) out.push({ kind: "frame", fact: `thrown at ${frameText(frame)}`, entry: entry.id });
  const head = attempts.length <= max ? attempts.length : Math.floor(max / 2);
  const tail = attempts.length <= max ? 0 : max - head;
  for (const a of attempts.slice(0, head))
    out.push({
      kind: "attempt",
      fact: attemptFact(a, error?.message ?? null),
      entry: entry.id,
      attempt: a.n,
    });
  if (tail) {
    out.push({ kind: "attempt", fact: `… ${attempts.length - max} more attempts`, entry: entry.id });
    for (const a of attempts.slice(-tail))
      out.push({
        kind: "attempt",
        fact: attemptFact(a, error?.message ?? null),
        entry: entry.id,
        attempt: a.n,
      });
  }
  if (options.data === false) return out;
  if (entry.input !== undefined)
    out.push({ kind: "input", fact: `input ${brief(entry.input, 160)}`, entry: entry.id });
  const detail = await facts.engine.entry(facts.info.id, entry.id).catch(() => null);
  if (detail) {
    out.push({
      kind: "state",
      fact: `state at the failing attempt ${brief(detail.stateBefore, 160)}`,
      entry: entry.id,
      ...(lastFailed ? { attempt: lastFailed.n } : {}),
    });
  }
  return out;
}
