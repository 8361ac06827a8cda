// The run's state at any entry, rebuilt from the current state and the entries' recorded changes.
//
// Each entry that changed state holds its diff (values before and after, per top-level key) and a
// state sequence number. Reverting, newest first, every diff at or after an entry yields the state
// before it. Loop compaction folds deleted entries' diffs into the loop entry, so this stays exact.

import { EntryNotFoundError } from "../errors.js";
import type { EntryRow, RunRow } from "../storage/store.js";
import type { EntryDetail } from "./api.js";
import { asEntries, compactedChanges, type Entry, entryPath } from "./entries.js";
import { type JsonValue, revertDiff, type StateDiff } from "./json.js";
import { toHistoryEntry } from "./views.js";

export interface Change {
  /** The entry that recorded it (seq). */
  entry: number;
  stateSeq: number;
  diff: StateDiff;
}

/** All recorded state changes of a run, oldest first. */
export function changesOf(rows: Entry[]): Change[] {
  const out: Change[] = [];
  for (const r of rows) {
    if (r.stateSeq !== null && r.stateDiff !== null)
      out.push({ entry: r.seq, stateSeq: r.stateSeq, diff: JSON.parse(r.stateDiff) as StateDiff });
    const compacted = compactedChanges(r);
    if (compacted) out.push({ entry: r.seq, stateSeq: compacted.stateSeq, diff: compacted.diff });
  }
  return out.sort((a, b) => a.stateSeq - b.stateSeq);
}

/** The state after reverting every change with stateSeq > `upTo`. */
export function stateAt(currentJson: string, changes: Change[], upTo: number): Record<string, JsonValue> {
  const state = JSON.parse(currentJson) as Record<string, JsonValue>;
  for (let i = changes.length - 1; i >= 0 && changes[i]!.stateSeq > upTo; i--)
    revertDiff(state, changes[i]!.diff);
  return state;
}

/** The state before and after one entry. */
export function stateAround(
  currentJson: string,
  rows: Entry[],
  entry: Entry,
): { before: unknown; after: unknown } {
  const changes = changesOf(rows);
  if (entry.stateSeq !== null) {
    return {
      before: stateAt(currentJson, changes, entry.stateSeq - 1),
      after: stateAt(currentJson, changes, entry.stateSeq),
    };
  }
  // No change of its own: before it, the state as of the last change recorded before it; after it, also
  // every change made inside it (a join's branches, a loop's iterations and what compaction folded in).
  const path = entryPath(entry.scope, entry.name);
  const inside = (r: Entry) =>
    r.seq === entry.seq || r.scope.startsWith(`${path}[`) || r.scope.startsWith(`${path}#`);
  let before = 0;
  let after = 0;
  for (const r of rows) {
    const seq = Math.max(r.stateSeq ?? 0, compactedSeq(r));
    if (inside(r)) after = Math.max(after, seq);
    else if (r.seq < entry.seq) before = Math.max(before, seq);
  }
  const at = stateAt(currentJson, changes, before);
  return { before: at, after: after > before ? stateAt(currentJson, changes, after) : at };
}

/** The state sequence number of the changes a loop's compaction folded into its entry (0 if none). */
function compactedSeq(r: Entry): number {
  return compactedChanges(r)?.stateSeq ?? 0;
}

/** One entry of a run, by id (seq) or path, with the run's state before and after it; EntryNotFoundError names what exists. */
export function entryDetail(run: RunRow, stored: EntryRow[], ref: number | string): EntryDetail {
  const rows = asEntries(stored);
  const row =
    typeof ref === "number"
      ? rows.find((r) => r.seq === ref)
      : rows.find((r) => entryPath(r.scope, r.name) === ref);
  if (!row) {
    const names = rows.filter((r) => r.scope === "").map((r) => r.name);
    // A bare name of a nested entry ("send" for "notify[mail]/send"): name the paths it could mean.
    const nested =
      typeof ref === "string"
        ? rows.filter((r) => r.scope !== "" && r.name === ref).map((r) => entryPath(r.scope, r.name))
        : [];
    throw new EntryNotFoundError(
      `Run "${run.workflow}/${run.key}" has no entry ${JSON.stringify(ref)}. ${nested.length ? `Nested entries of that name, by path: ${nested.slice(0, 10).join(", ")}. ` : ""}${names.length ? `Its root entries are: ${names.slice(0, 20).join(", ")}${names.length > 20 ? ", ..." : ""}.` : "Its history is empty."} Entries are named by path (e.g. "notify[mail]/send") or id.`,
      { run: `${run.workflow}/${run.key}`, ref },
    );
  }
  const { before, after } = stateAround(run.state, rows, row);
  return { ...toHistoryEntry(row), stateBefore: before, stateAfter: after };
}
