// Failure signatures counted across runs: "what fails most" as a grouped query over each failed run's
// stored signature (see src/failure-signature.ts for how a signature is made).

import type { WaymarkEngine } from "../engine/api.js";
import type { RunInfo } from "../engine/views.js";
import {
  type FailureKey,
  keyNeedsEntries,
  normaliseMessage,
  retryFailureKey,
  runFailureKey,
} from "../failure-signature.js";
import { cut, iso } from "./format.js";
import type { FailureGroup, FailureList } from "./types.js";

export {
  entryFailureKey,
  type FailureKey,
  normaliseMessage,
  OUTSIDE_ENTRIES,
  retryFailureKey,
  runFailureKey,
  signatureOf,
} from "../failure-signature.js";
export type { FailureGroup, FailureList } from "./types.js";

/** The failure key of a failing run, read again to describe its group. */
async function keyOf(engine: WaymarkEngine, run: RunInfo): Promise<FailureKey | null> {
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
  engine: WaymarkEngine,
  options: {
    since?: number;
    workflow?: string;
    signature?: string;
    tags?: Record<string, string>;
    limit?: number;
  } = {},
): Promise<FailureList> {
  const since = options.since ?? engine.clock.now() - 7 * 86_400_000;
  const { total, groups } = await engine.failureGroups({
    since,
    limit: options.limit ?? 20,
    ...(options.workflow !== undefined ? { workflow: options.workflow } : {}),
    ...(options.signature !== undefined ? { signature: options.signature } : {}),
    ...(options.tags !== undefined ? { tags: options.tags } : {}),
  });
  const failures: FailureGroup[] = [];
  for (const g of groups) {
    // The newest runs of the group name it (its keys) and describe it (the newest one's error).
    const page = await engine.listRuns({
      workflow: g.workflow,
      failureSignature: g.signature,
      limit: 5,
      ...(options.tags !== undefined ? { tags: options.tags } : {}),
    });
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
