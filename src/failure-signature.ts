// Failure signatures: runs that fail the same way share one, whatever their ids, numbers and quoted values.
// A signature hashes the workflow, the failing entry's name, the error's name and its normalised message.
//
// Pure functions over recorded values, shared by the engine (which stores a run's signature when it fails
// or starts retrying), the stores' migrations (which backfill it) and the diagnosis (which explains it).

import { createHash } from "node:crypto";
import { divergence } from "./divergence.js";
import type { EntryRow } from "./storage/store.js";

/** An error as recorded (see ErrorInfo in engine/error-info.ts). */
export interface RecordedError {
  name: string;
  message: string;
  code?: string;
  details?: Record<string, unknown>;
}

/** The parts of a history entry a failure key reads. */
export interface FailedEntry {
  id: number;
  path: string;
  scope: string;
  name: string;
  kind: string;
  status: string;
  error?: RecordedError;
  attempts?: ReadonlyArray<{ error?: RecordedError }>;
}

/** What a signature is made of. */
export interface FailureKey {
  workflow: string;
  /** The failing entry's name, or "(workflow code)" when the code failed outside any entry. */
  entry: string;
  errorName: string;
  /** The message as recorded (the signature uses its normalised form). */
  message: string;
}

/** The entry name of failures thrown by workflow code outside any entry. */
export const OUTSIDE_ENTRIES = "(workflow code)";

const RULES: Array<[RegExp, string]> = [
  [/\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, "<time>"],
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<id>"],
  [/"(?:[^"\\]|\\.)*"|'(?:[^'\\\n]|\\.)*'|`[^`]*`/g, '"<v>"'],
  [/\b0x[0-9a-f]+\b/gi, "<n>"],
  [/\b(?=[\w-]*\d)(?=[\w-]*[a-z])[a-z0-9]+(?:[_-][a-z0-9]+)+\b/gi, "<id>"],
  [/\b(?=[a-z]*\d)(?=\d*[a-z])[a-z\d]{8,}\b/gi, "<id>"],
  [/\b\d{4}-\d{2}(?:-\d{2})?\b/g, "<date>"],
  [/\b\d+(?:[.,]\d+)*\b/g, "<n>"],
  [/\s+/g, " "],
];

/** The message with times, ids, quoted values and numbers replaced by placeholders (at most 200 characters). */
export function normaliseMessage(message: string): string {
  let out = message;
  for (const [re, to] of RULES) out = out.replace(re, to);
  out = out.trim();
  return out.length > 200 ? `${out.slice(0, 200)}…` : out;
}

/** The signature of a failure key: 12 hex characters. */
export function signatureOf(key: FailureKey): string {
  return createHash("sha1")
    .update(`${key.workflow}\n${key.entry}\n${key.errorName}\n${normaliseMessage(key.message)}`)
    .digest("hex")
    .slice(0, 12);
}

/** The original error of a failed step (StepFailedError keeps it as details.cause), else the error itself. */
export function causeOf<E extends RecordedError>(error: E | null | undefined): E | null {
  if (!error) return null;
  const cause = error.details?.cause as E | undefined;
  return cause && typeof cause === "object" && typeof cause.message === "string" ? cause : error;
}

/** The innermost failed entries (no other failed entry nested in them), oldest first. */
export function innermostFailed<E extends FailedEntry>(entries: readonly E[]): E[] {
  const failed = entries.filter((e) => e.status === "failed");
  return failed
    .filter(
      (f) =>
        !failed.some(
          (g) => g !== f && (g.scope.startsWith(`${f.path}[`) || g.scope.startsWith(`${f.path}#`)),
        ),
    )
    .sort((a, b) => a.id - b.id);
}

/** The failure key of a failed entry (a step's original error, not its StepFailedError wrapper). */
export function entryFailureKey(workflow: string, entry: FailedEntry): FailureKey {
  const cause = causeOf(entry.error) ?? { name: "Error", message: "unknown" };
  return { workflow, entry: entry.name, errorName: cause.name, message: cause.message };
}

/** The failure key of a retrying entry: its latest attempt's error. */
export function retryFailureKey(workflow: string, entry: FailedEntry): FailureKey | null {
  const last = [...(entry.attempts ?? [])].reverse().find((a) => a.error);
  if (!last?.error) return null;
  return { workflow, entry: entry.name, errorName: last.error.name, message: last.error.message };
}

/** True when a failed run's key needs its entries (the error alone does not name the failing step). */
export function keyNeedsEntries(error: RecordedError | null): boolean {
  return (
    error !== null &&
    (error.code === "BRANCH_FAILED" || (error.code !== "STEP_FAILED" && error.code !== "HISTORY_DIVERGED"))
  );
}

/** The failure key of a failed run, from its error (and its entries when the error alone does not say). */
export function runFailureKey(
  info: { workflow: string; error: RecordedError | null },
  entries?: readonly FailedEntry[],
): FailureKey | null {
  const error = info.error;
  if (!error) return null;
  const details = (error.details ?? {}) as Record<string, unknown>;
  if (error.code === "HISTORY_DIVERGED") {
    const recorded = details.recorded as { kind: string; name: string } | null | undefined;
    const requested = details.requested as { kind: string; name: string } | null | undefined;
    return {
      workflow: info.workflow,
      entry: recorded?.name ?? "(end)",
      errorName: error.name,
      message: divergence(recorded ?? null, requested ?? null),
    };
  }
  if (entries) {
    const failed = innermostFailed(entries)[0];
    if (failed && failed.kind === "step") return entryFailureKey(info.workflow, failed);
  }
  if (error.code === "STEP_FAILED" && typeof details.step === "string") {
    const cause = causeOf(error) as RecordedError;
    return {
      workflow: info.workflow,
      entry: details.step.slice(details.step.lastIndexOf("/") + 1),
      errorName: cause.name,
      message: cause.message,
    };
  }
  return { workflow: info.workflow, entry: OUTSIDE_ENTRIES, errorName: error.name, message: error.message };
}

function parse<T>(json: string | null): T | undefined {
  if (json === null) return undefined;
  try {
    return JSON.parse(json) as T;
  } catch {
    return undefined;
  }
}

/**
 * An entry row as a failure key reads it. A completed entry's error and attempts are never part of a key
 * (keys come from failed and retrying entries), and a completed step loaded for replay holds neither.
 */
function failedEntry(row: EntryRow): FailedEntry {
  const done = row.status === "completed";
  const error = done ? undefined : parse<RecordedError>(row.error);
  const attempts = done ? undefined : parse<Array<{ error?: RecordedError }>>(row.attempts);
  return {
    id: row.seq,
    path: row.scope === "" ? row.name : `${row.scope}/${row.name}`,
    scope: row.scope,
    name: row.name,
    kind: row.kind,
    status: row.status,
    ...(error ? { error } : {}),
    ...(attempts ? { attempts } : {}),
  };
}

/** The parts of a run row its stored signature depends on (JSON as stored). */
export interface SignedRun {
  workflow: string;
  status: string;
  error: string | null;
  waiting: string | null;
}

/**
 * The signature stored with a run: for a failed run, its failure's; for a retrying one, the latest
 * attempt's error of the entry it retries; otherwise null. `rows` are the run's entries (read only
 * when the error alone does not name the failing step, or to find the retrying entry).
 */
export function storedSignature(run: SignedRun, rows: () => readonly EntryRow[]): string | null {
  if (run.status === "failed") {
    const error = parse<RecordedError>(run.error) ?? null;
    const entries = keyNeedsEntries(error) ? rows().map(failedEntry) : undefined;
    const key = runFailureKey({ workflow: run.workflow, error }, entries);
    return key ? signatureOf(key) : null;
  }
  if (run.status === "retrying") {
    const waits = parse<Array<{ kind: string; entry: string }>>(run.waiting) ?? [];
    const wait = waits.find((w) => w.kind === "retry");
    if (!wait) return null;
    const row = rows().find((r) => (r.scope === "" ? r.name : `${r.scope}/${r.name}`) === wait.entry);
    const key = row ? retryFailureKey(run.workflow, failedEntry(row)) : null;
    return key ? signatureOf(key) : null;
  }
  return null;
}
