// Error signatures: runs that fail the same way share one, whatever their ids, numbers and quoted values.
// A signature hashes the workflow, the failing entry's name, the error's name and its normalised message.

import { createHash } from "node:crypto";
import type { Engine } from "../engine/engine.js";
import type { ErrorInfo } from "../engine/history.js";
import type { HistoryEntry, RunInfo } from "../engine/views.js";
import { innermostFailed } from "./facts.js";
import { causeOf, cut, iso } from "./format.js";

/** What a signature is made of. */
export interface FailureKey {
  workflow: string;
  /** The failing entry's name, or "(workflow code)" when the code failed outside any entry. */
  entry: string;
  errorName: string;
  /** The message as recorded (the signature uses its normalised form). */
  message: string;
}

/** One signature counted across runs. */
export interface FailureGroup {
  signature: string;
  workflow: string;
  entry: string;
  errorName: string;
  /** The normalised message. */
  pattern: string;
  /** One message as recorded. */
  example: string;
  count: number;
  /** How many of them are still retrying (the rest failed). */
  retrying: number;
  firstSeen: string;
  lastSeen: string;
  /** Up to five run keys, most recent first. */
  keys: string[];
}

/** Failure signatures over a window, with how much was scanned. */
export interface FailureList {
  since: string;
  /** Runs looked at (failed or retrying, newest first). */
  scanned: number;
  /** False when the scan stopped at its limit before reaching `since`. */
  complete: boolean;
  failures: FailureGroup[];
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

/** The message with times, ids, quoted values and numbers replaced by placeholders. */
export function normaliseMessage(message: string): string {
  let out = message;
  for (const [re, to] of RULES) out = out.replace(re, to);
  return cut(out.trim(), 200);
}

/** The signature of a failure key: 12 hex characters. */
export function signatureOf(key: FailureKey): string {
  return createHash("sha1")
    .update(`${key.workflow}\n${key.entry}\n${key.errorName}\n${normaliseMessage(key.message)}`)
    .digest("hex")
    .slice(0, 12);
}

function lastSegment(path: string): string {
  return path.slice(path.lastIndexOf("/") + 1);
}

/** The failure key of a failed entry (a step's original error, not its StepFailedError wrapper). */
export function entryFailureKey(workflow: string, entry: HistoryEntry): FailureKey {
  const cause = causeOf(entry.error) ?? { name: "Error", message: "unknown" };
  return { workflow, entry: entry.name, errorName: cause.name, message: cause.message };
}

/** The failure key of a retrying entry: its latest attempt's error. */
export function retryFailureKey(workflow: string, entry: HistoryEntry): FailureKey | null {
  const last = [...(entry.attempts ?? [])].reverse().find((a) => a.error);
  if (!last?.error) return null;
  return { workflow, entry: entry.name, errorName: last.error.name, message: last.error.message };
}

/** The failure key of a failed run, from its error (and its entries when the error alone does not say). */
export function runFailureKey(info: RunInfo, entries?: HistoryEntry[]): FailureKey | null {
  const error = info.error;
  if (!error) return null;
  const details = (error.details ?? {}) as Record<string, unknown>;
  if (error.code === "HISTORY_DIVERGED") {
    const recorded = details.recorded as { kind: string; name: string } | null | undefined;
    const requested = details.requested as { kind: string; name: string } | null | undefined;
    const holds = recorded ? `${recorded.kind} "${recorded.name}"` : "nothing more";
    const asks = requested ? `${requested.kind} "${requested.name}"` : "nothing more";
    return {
      workflow: info.workflow,
      entry: recorded?.name ?? "(end)",
      errorName: error.name,
      message: `history holds ${holds}, the code asks for ${asks}`,
    };
  }
  if (entries) {
    const failed = innermostFailed(entries)[0];
    if (failed && failed.kind === "step") return entryFailureKey(info.workflow, failed);
  }
  if (error.code === "STEP_FAILED" && typeof details.step === "string") {
    const cause = causeOf(error) as ErrorInfo;
    return {
      workflow: info.workflow,
      entry: lastSegment(details.step),
      errorName: cause.name,
      message: cause.message,
    };
  }
  return { workflow: info.workflow, entry: OUTSIDE_ENTRIES, errorName: error.name, message: error.message };
}

async function keyOf(engine: Engine, run: RunInfo): Promise<{ key: FailureKey; at: number } | null> {
  if (run.status === "retrying") {
    const wait = run.waiting?.find((w) => w.kind === "retry");
    if (!wait) return null;
    const entries = await engine.history(run.id, { limit: 10_000 });
    const entry = entries.find((e) => e.path === wait.entry);
    const key = entry ? retryFailureKey(run.workflow, entry) : null;
    return key ? { key, at: run.updatedAt } : null;
  }
  const needsEntries =
    run.error?.code === "BRANCH_FAILED" ||
    (run.error && run.error.code !== "STEP_FAILED" && run.error.code !== "HISTORY_DIVERGED");
  const entries = needsEntries ? await engine.history(run.id, { limit: 10_000 }) : undefined;
  const key = runFailureKey(run, entries);
  return key ? { key, at: run.finishedAt ?? run.updatedAt } : null;
}

/**
 * Failed and retrying runs since `since`, grouped by signature, most frequent first. Scans runs newest
 * first, at most `scanLimit` of them.
 */
export async function listFailures(
  engine: Engine,
  options: { since?: number; workflow?: string; limit?: number; scanLimit?: number } = {},
): Promise<FailureList> {
  const since = options.since ?? engine.clock.now() - 7 * 86_400_000;
  const scanLimit = options.scanLimit ?? 5000;
  const groups = new Map<string, FailureGroup & { first: number; last: number }>();
  let scanned = 0;
  let complete = true;
  let cursor: string | undefined;
  for (;;) {
    const page = await engine.listRuns({
      status: ["failed", "retrying"],
      ...(options.workflow !== undefined ? { workflow: options.workflow } : {}),
      limit: Math.min(500, scanLimit - scanned),
      ...(cursor ? { cursor } : {}),
    });
    for (const run of page.runs) {
      scanned++;
      const found = await keyOf(engine, run);
      if (!found || found.at < since) continue;
      const signature = signatureOf(found.key);
      let g = groups.get(signature);
      if (!g) {
        g = {
          signature,
          workflow: found.key.workflow,
          entry: found.key.entry,
          errorName: found.key.errorName,
          pattern: normaliseMessage(found.key.message),
          example: cut(found.key.message, 200),
          count: 0,
          retrying: 0,
          firstSeen: "",
          lastSeen: "",
          keys: [],
          first: found.at,
          last: found.at,
        };
        groups.set(signature, g);
      }
      g.count++;
      if (run.status === "retrying") g.retrying++;
      g.first = Math.min(g.first, found.at);
      g.last = Math.max(g.last, found.at);
      if (g.keys.length < 5) g.keys.push(run.key);
    }
    if (!page.nextCursor) break;
    if (scanned >= scanLimit) {
      complete = false;
      break;
    }
    cursor = page.nextCursor;
  }
  const failures = [...groups.values()]
    .sort((a, b) => b.count - a.count || b.last - a.last)
    .slice(0, options.limit ?? 20)
    .map(({ first, last, ...g }) => ({ ...g, firstSeen: iso(first), lastSeen: iso(last) }));
  return { since: iso(since), scanned, complete, failures };
}
