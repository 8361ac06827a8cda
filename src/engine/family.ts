// A run's family: the run that started it with ctx.child, and the runs it started, with their statuses and
// the entries that started them (for get_run, the inspector and diagnosis).

import type { RunStatus, Store } from "../storage/store.js";
import { asEntries, detailOf, entryPath } from "./entries.js";

/** One run of a family, by address. */
export interface RunAddress {
  id: number;
  workflow: string;
  key: string;
  status: RunStatus;
}

/** A child run: its address and status, the parent's entry that started it, whether it was detached. */
export interface ChildRun extends RunAddress {
  /** Path of the parent's ctx.child entry, or null when history no longer holds it. */
  entry: string | null;
  /** Entry id (seq) of that entry, or null. */
  entryId: number | null;
  detached: boolean;
}

/** The run that started a run, and the runs it started (oldest first). */
export interface RunFamily {
  parent: RunAddress | null;
  children: ChildRun[];
}

/** Reads the family of run `runId` whose parent is `parentRunId`. */
export async function readFamily(
  store: Store,
  runId: number,
  parentRunId: number | null,
): Promise<RunFamily> {
  const parentRow = parentRunId === null ? undefined : await store.getRun(parentRunId);
  const rows = await store.childRuns(runId);
  const entries = new Map<string, { path: string; id: number; detached: boolean }>();
  if (rows.length) {
    for (const e of asEntries(await store.allEntries(runId))) {
      if (e.kind !== "child") continue;
      const d = detailOf(e);
      if (d)
        entries.set(`${d.workflow}/${d.key}`, {
          path: entryPath(e.scope, e.name),
          id: e.seq,
          detached: !!d.detach,
        });
    }
  }
  return {
    parent: parentRow
      ? { id: parentRow.id, workflow: parentRow.workflow, key: parentRow.key, status: parentRow.status }
      : null,
    children: rows.map((r) => {
      const e = entries.get(`${r.workflow}/${r.key}`);
      return {
        id: r.id,
        workflow: r.workflow,
        key: r.key,
        status: r.status,
        entry: e?.path ?? null,
        entryId: e?.id ?? null,
        detached: e?.detached ?? false,
      };
    }),
  };
}
