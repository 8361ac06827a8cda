// Failure signatures counted across runs: "what fails most" as a grouped query over each failed run's
// stored signature (see src/failure-signature.ts for how a signature is made).

import type { Engine } from "../engine/engine.js";
import type { RunInfo } from "../engine/views.js";
import {
  type FailureKey,
  keyNeedsEntries,
  normaliseMessage,
  retryFailureKey,
  runFailureKey,
} from "../failure-signature.js";
import { cut, iso } from "./format.js";

export {
  entryFailureKey,
  type FailureKey,
  normaliseMessage,
  OUTSIDE_ENTRIES,
  retryFailureKey,
  runFailureKey,
  signatureOf,
} from "../failure-signature.js";

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

/** Failure signatures over a window. */
export interface FailureList {
  since: string;
  /** Failed or retrying runs in the window, in every group. */
  scanned: number;
  /** Always true: every failing run's signature is stored, so nothing is left out. */
  complete: boolean;
  failures: FailureGroup[];
}

/** The failure key of a failing run, read again to describe its group. */
async function keyOf(engine: Engine, run: RunInfo): Promise<FailureKey | null> {
  if (run.status === "retrying") {
    const wait = run.waiting?.find((w) => w.kind === "retry");
    if (!wait) return null;
    const entries = await engine.history(run.id, { limit: 10_000 });
    const entry = entries.find((e) => e.path === wait.entry);
    return entry ? retryFailureKey(run.workflow, entry) : null;
  }
  const entries = keyNeedsEntries(run.error) ? await engine.history(run.id, { limit: 10_000 }) : undefined;
  return runFailureKey(run, entries);
}

/** Failed and retrying runs since `since`, grouped by signature, most frequent first. */
export async function listFailures(
  engine: Engine,
  options: { since?: number; workflow?: string; signature?: string; limit?: number } = {},
): Promise<FailureList> {
  const since = options.since ?? engine.clock.now() - 7 * 86_400_000;
  const { total, groups } = await engine.failureGroups({
    since,
    limit: options.limit ?? 20,
    ...(options.workflow !== undefined ? { workflow: options.workflow } : {}),
    ...(options.signature !== undefined ? { signature: options.signature } : {}),
  });
  const failures: FailureGroup[] = [];
  for (const g of groups) {
    // The newest runs of the group name it (its keys) and describe it (the newest one's error).
    const page = await engine.listRuns({ workflow: g.workflow, failureSignature: g.signature, limit: 5 });
    const newest = page.runs[0];
    const key = newest ? await keyOf(engine, newest) : null;
    failures.push({
      signature: g.signature,
      workflow: g.workflow,
      entry: key?.entry ?? "(unknown)",
      errorName: key?.errorName ?? "Error",
      pattern: key ? normaliseMessage(key.message) : "",
      example: key ? cut(key.message, 200) : "",
      count: g.count,
      retrying: g.retrying,
      firstSeen: iso(g.firstAt),
      lastSeen: iso(g.lastAt),
      keys: page.runs.map((r) => r.key),
    });
  }
  return { since: iso(since), scanned: total, complete: true, failures };
}
