// A replay worked out from rows alone: what is discarded, reopened, kept and restored. Pure: no store, no
// engine, no clock, so every rule of the README's "Versions and replay" is testable on plain rows.
//
// - the chosen entry and every entry first recorded after it (greater seq), in any scope, are discarded: a
//   later entry of a sibling join branch is discarded too, and runs again (steps are at-least-once anyway);
// - the entries that contain the chosen one (its join, race or loop, at any depth) are kept but reopened:
//   back to running, their outcome cleared; a reopened loop restarts at the chosen entry's iteration with
//   the loop state that iteration began with;
// - the run's state goes back to what it was before the chosen entry (the discarded entries' recorded
//   changes are reverted, newest first, and those of kept entries applied again);
// - messages consumed by discarded entries go back on their queues, in their original order.

import { InvalidInputError, ReplayError } from "../errors.js";
import type { EntryRow, MessageRow, RunRow } from "../storage/store.js";
import {
  asEntries,
  attemptsOf,
  detailOf,
  type Entry,
  type EntryOf,
  entryPath,
  isContainer,
  reopenedContainer,
} from "./entries.js";
import type { ErrorInfo } from "./error-info.js";
import { applyDiff, type JsonValue, revertDiff } from "./json.js";
import type { ReplayPlan } from "./replay-types.js";
import { changesOf } from "./state-history.js";

export type { PlannedEntry, ReplayPlan } from "./replay-types.js";

/** The scope of replay markers: never code's history, never discarded. */
export const REPLAY_SCOPE = "~replay";

/** A plan with what its apply and its check need: the pure result of planReplay. */
export interface PlannedReplay {
  /** The answer, before the check and the apply fill in checkedAgainstCode, dryRun and applied. */
  plan: Omit<ReplayPlan, "checkedAgainstCode" | "dryRun" | "applied">;
  /** The history the code must match: entries kept as they are, and the reopened containers. */
  kept: Entry[];
  /** Seqs of the entries to delete. */
  discardSeqs: number[];
  /** The containers to store again, reopened. */
  reopened: Entry[];
  /** Every discarded entry (the replay marker records the first ones). */
  discarded: Entry[];
  /** The run's state to resume with, as JSON. */
  state: string;
  /** Seq of the next entry (the replay marker's) and how many replay markers came before. */
  nextSeq: number;
  markers: number;
}

/** What planReplay reads: the run, all its entries and messages (consumed ones too), and the choices made. */
export interface ReplayInput {
  run: RunRow;
  entries: EntryRow[];
  messages: MessageRow[];
  /** Entry path or id to replay from; default the failed (or cancelled) entry. */
  fromStep?: string | number | undefined;
  /** The version the run goes on with. */
  version: number;
}

/** The version a replay runs on: the one asked for, else the latest known; refuses one not registered. */
export function replayVersion(run: RunRow, known: number[], asked: number | undefined): number {
  const to = asked ?? (known.length ? Math.max(...known) : run.version);
  if (known.length && !known.includes(to)) {
    throw new InvalidInputError(
      `Workflow "${run.workflow}" has no version ${to}; registered versions are ${known.join(", ")}.`,
    );
  }
  return to;
}

/** The entry a replay without fromStep starts from: the innermost failed (or cancelled) entry. */
function defaultFrom(run: RunRow, rows: Entry[]): Entry | null {
  const label = `${run.workflow}/${run.key}`;
  const code = rows.filter((r) => r.scope !== REPLAY_SCOPE);
  if (run.status === "failed") {
    // A rollback handler failed: the replay runs it again and the remaining ones (the run fails again, undone).
    const undo = code
      .filter((r) => r.kind === "rollback" && r.status === "failed")
      .sort((a, b) => b.seq - a.seq);
    if (undo[0]) return undo[0];
    const failed = code.filter((r) => r.status === "failed");
    if (failed.length) {
      // The innermost: a failed entry no other failed entry is nested in.
      const inner = failed.filter(
        (f) => !failed.some((g) => g !== f && g.scope.startsWith(entryPath(f.scope, f.name))),
      );
      return inner.sort((a, b) => a.seq - b.seq)[0] ?? null;
    }
    const error = run.error ? (JSON.parse(run.error) as ErrorInfo) : null;
    if (error?.code === "HISTORY_DIVERGED") {
      const from = (error.details?.replayFrom as string | null) ?? null;
      throw new ReplayError(
        "REPLAY_NEEDS_STEP",
        `Run "${label}" failed because its code no longer matches its history, so there is no failed step to retry. Replay it with fromStep${from ? ` "${from}" (the earliest entry a replay could start from)` : ""}.`,
        { run: label, replayFrom: from },
      );
    }
    return null;
  }
  if (run.status === "cancelled") {
    const cancelled = code.filter((r) => r.status === "cancelled").sort((a, b) => a.seq - b.seq);
    return cancelled[0] ?? null;
  }
  throw new InvalidInputError(
    `Run "${label}" is ${run.status}; there is no failed step to retry. Pass fromStep to rerun it from an entry.`,
  );
}

/** The entry named by fromStep (a path or an id), or InvalidInputError listing the root entries. */
function chosenFrom(run: RunRow, rows: Entry[], ref: string | number): Entry {
  const from =
    typeof ref === "number"
      ? rows.find((r) => r.seq === ref)
      : rows.find((r) => entryPath(r.scope, r.name) === ref);
  if (!from || from.scope === REPLAY_SCOPE) {
    const names = rows.filter((r) => r.scope === "").map((r) => r.name);
    throw new InvalidInputError(
      `Run "${run.workflow}/${run.key}" has no entry ${JSON.stringify(ref)} to replay from. Its root entries are: ${names.join(", ") || "(none)"}. Name nested entries by path, e.g. "notify[mail]/send".`,
    );
  }
  return from;
}

/** Containers (join, race, loop entries) of an entry, outermost first. */
function containersOf(rows: Entry[], entry: Entry): Entry[] {
  const out: Entry[] = [];
  for (const r of rows) {
    if (!isContainer(r.kind)) continue;
    const path = entryPath(r.scope, r.name);
    if (entry.scope.startsWith(`${path}[`) || entry.scope.startsWith(`${path}#`)) out.push(r);
  }
  return out.sort((a, b) => a.scope.length - b.scope.length);
}

/**
 * The state without the discarded entries' changes: reverts every change from the first discarded one on,
 * newest first, then applies again those of kept entries (a join branch kept beside the replayed one may
 * have committed after it), in their order.
 */
function stateWithout(run: RunRow, rows: Entry[], discard: ReadonlySet<number>): Record<string, JsonValue> {
  const state = JSON.parse(run.state) as Record<string, JsonValue>;
  const changes = changesOf(rows);
  const first = changes.findIndex((c) => discard.has(c.entry));
  if (first >= 0) {
    const later = changes.slice(first);
    for (let i = later.length - 1; i >= 0; i--) revertDiff(state, later[i]!.diff);
    for (const c of later) if (!discard.has(c.entry)) applyDiff(state, c.diff);
  }
  return state;
}

/** A replay of one run worked out from its rows (see the rules above); throws on a bad choice of entry. */
export function planReplay(input: ReplayInput): PlannedReplay {
  const { run } = input;
  const rows = asEntries(input.entries);
  const from = input.fromStep !== undefined ? chosenFrom(run, rows, input.fromStep) : defaultFrom(run, rows);
  const containers = from ? containersOf(rows, from) : [];
  const containerSeqs = new Set(containers.map((c) => c.seq));
  const forward = from
    ? rows.filter(
        (r) =>
          r.seq >= from.seq && !containerSeqs.has(r.seq) && r.scope !== REPLAY_SCOPE && r.kind !== "rollback",
      )
    : [];
  const forwardSeqs = new Set(forward.map((r) => r.seq));
  // A handler's record goes with its step (which runs again), or when the replay reruns the rollback from it.
  const undos = rows.filter((r): r is EntryOf<"rollback"> => r.kind === "rollback");
  const discarded = forward.concat(
    undos.filter(
      (r) => forwardSeqs.has(detailOf(r)?.stepSeq ?? -1) || (from?.kind === "rollback" && r.seq >= from.seq),
    ),
  );
  const discardSeqs = new Set(discarded.map((r) => r.seq));
  const undone = undos
    .filter((r) => r.status === "completed")
    .map((r) => ({ id: detailOf(r)?.stepSeq ?? r.seq, path: r.name, redo: discardSeqs.has(r.seq) }));
  const reopened = from ? containers.map((c) => reopenedContainer(c, from)) : [];
  const state = stateWithout(run, rows, discardSeqs);
  const consumed = input.messages
    .filter((m) => m.consumedAt !== null && m.consumedBy !== null && discardSeqs.has(m.consumedBy))
    .sort((a, b) => a.id - b.id);
  const kept = rows.filter((r) => !discardSeqs.has(r.seq) && !containerSeqs.has(r.seq)).concat(reopened);
  return {
    plan: {
      run: `${run.workflow}/${run.key}`,
      from: from ? { id: from.seq, path: entryPath(from.scope, from.name) } : null,
      discard: discarded.map((r) => ({
        id: r.seq,
        path: entryPath(r.scope, r.name),
        kind: r.kind,
        status: r.status,
      })),
      rerun: discarded
        .filter((r) => r.kind === "step")
        .map((r) => ({
          id: r.seq,
          path: entryPath(r.scope, r.name),
          status: r.status,
          attempts: attemptsOf(r).length,
        })),
      reopen: reopened.map((r) => ({ id: r.seq, path: entryPath(r.scope, r.name), kind: r.kind })),
      restoreMessages: consumed.map((m) => ({
        id: m.id,
        queue: m.queue,
        body: JSON.parse(m.body),
        sentAt: m.sentAt,
      })),
      restoreState: state,
      version: { from: run.version, to: input.version },
      ...(undone.length ? { undone } : {}),
    },
    kept,
    discardSeqs: [...discardSeqs],
    reopened,
    discarded,
    state: JSON.stringify(state),
    nextSeq: rows.reduce((m, r) => Math.max(m, r.seq), 0) + 1,
    markers: rows.filter((r) => r.scope === REPLAY_SCOPE).length,
  };
}
