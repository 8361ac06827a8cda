// History entries as one typed union: every kind, its detail, its statuses, and what is derived from a kind.
//
// IMPORTANT: this is the one list of entry kinds. A new kind is added here (its detail in EntryDetails, its
// traits in TRAITS, the cases the switches below then ask for), in the primitive that records it, and in
// the workflow context that offers it; every other switch over kinds ends in assertNever, so the compiler
// names any place left. Stored rows keep `kind`, `status` and `detail` as text: the store never reads them.

import { assertNever } from "../assert-never.js";
import type { EntryRow } from "../storage/store.js";
import type { ErrorInfo } from "./error-info.js";
import type { StateDiff } from "./json.js";

/** Entry statuses as recorded. */
export const ENTRY_STATUSES = ["running", "retrying", "waiting", "completed", "failed", "cancelled"] as const;

/** The status of an entry. */
export type EntryStatus = (typeof ENTRY_STATUSES)[number];

/** Statuses of an entry still in progress (a cancel records these as cancelled). */
const UNFINISHED: ReadonlySet<string> = new Set<EntryStatus>(["running", "waiting", "retrying"]);

/** True while an entry is in progress: running, waiting or retrying. */
export function isUnfinished(status: string): boolean {
  return UNFINISHED.has(status);
}

/** One attempt of a step. */
export interface Attempt {
  n: number;
  startedAt: number;
  endedAt?: number;
  status: "running" | "completed" | "failed" | "timed-out" | "interrupted" | "cancelled";
  error?: ErrorInfo;
  /** When the next attempt was scheduled after this one failed. */
  retryAt?: number;
}

/** A sleep's detail: when it ends (ms since the epoch), fixed when the sleep is first reached. */
export interface SleepDetail {
  until: number;
}

/** A queue wait's detail: its queue and deadline, then the message it took or that it timed out. */
export interface QueueDetail {
  /** The queue waited on; for a wait on several, the first named. */
  queue: string;
  /** A wait on several queues: all of them, in the order named. */
  queues?: string[];
  /** A wait on several queues: the queue the message it took came from. */
  received?: string;
  until: number | null;
  /** A batch wait: how many messages it waits for, and the ids of those it took so far, in order. */
  count?: number;
  messageIds?: number[];
  messageId?: number;
  sentAt?: number;
  timedOut?: boolean;
}

/** A join's detail: its branches, in the order given. */
export interface JoinDetail {
  branches: string[];
}

/** A race's detail: its branches, and the winner once decided. */
export interface RaceDetail {
  branches: string[];
  winner?: string;
}

/** A loop's detail: where it is, its state, and what compaction folded away. */
export interface LoopDetail {
  iteration: number;
  state: unknown;
  /** The loop state each kept iteration began with (so a replay can restart inside one). */
  starts?: Record<string, unknown>;
  /** State changes of compacted iterations, merged, so state before earlier entries stays derivable. */
  compacted?: { diff: StateDiff; stateSeq: number; iterations: number };
}

/** A ctx.version marker's detail: the version pinned at that point. */
export interface VersionDetail {
  version: number;
}

/** A replay marker's detail (scope "~replay"): who asked, from where, and what was discarded. */
export interface ReplayDetail {
  requestedBy: string;
  from: { id: number; path: string } | null;
  previousStatus: string;
  previousError: string | null;
  version: { from: number; to: number };
  discarded: Array<{
    id: number;
    path: string;
    kind: string;
    status: string;
    attempts: number;
    error?: string;
  }>;
  discardedCount: number;
  restoredMessages: number[];
}

/** A child run's detail: its address (workflow and key, its run id), whether it was detached, how it ended. */
export interface ChildDetail {
  workflow: string;
  key: string;
  runId: number;
  detach?: boolean;
  /** The child's status once it ended (completed, failed, cancelled). */
  childStatus?: string;
}

/** A rollback handler's run (scope "~rollback"): the step it undoes and that step's place in the order. */
export interface RollbackDetail {
  step: string;
  stepSeq: number;
  order: number;
}

/** The scope of rollback handlers' entries: never code's history (the code does not call them). */
export const ROLLBACK_SCOPE = "~rollback";

/**
 * What a completed step records besides its output: the tags it set with step.tag, and its place in the
 * order of completion when it carries a rollback handler.
 */
export interface StepDetail {
  tags?: Record<string, string>;
  rollback?: { order: number };
}

/** Each kind's detail as recorded (null: the kind records none). The keys are the entry kinds. */
export interface EntryDetails {
  step: StepDetail;
  sleep: SleepDetail;
  queue: QueueDetail;
  join: JoinDetail;
  race: RaceDetail;
  loop: LoopDetail;
  version: VersionDetail;
  replay: ReplayDetail;
  child: ChildDetail;
  checkpoint: null;
  rollback: RollbackDetail;
}

/** Kinds of history entries. */
export type EntryKind = keyof EntryDetails;

/** An entry of one kind: the stored row, its kind and status typed (its detail read with detailOf). */
export type EntryOf<K extends EntryKind> = Omit<EntryRow, "kind" | "status"> & {
  kind: K;
  status: EntryStatus;
};

/** A history entry of any kind, discriminated by `kind`. */
export type Entry = { [K in EntryKind]: EntryOf<K> }[EntryKind];

/** What the engine, the MCP layer and the inspector need to know of a kind. */
export interface KindTraits {
  /** Holds scopes of its own (branches, iterations): replay reopens it, a cancel walks into it. */
  container: boolean;
  /** Waits on time or a message with no step in flight ("waiting" while in progress). */
  wait: boolean;
  /** A point in history rather than a span of work (a version pin, a replay). */
  marker: boolean;
  /** The call that records it. */
  call: string;
}

const TRAITS: { readonly [K in EntryKind]: KindTraits } = {
  step: { container: false, wait: false, marker: false, call: "ctx.step" },
  sleep: { container: false, wait: true, marker: false, call: "ctx.sleep or ctx.sleepUntil" },
  queue: { container: false, wait: true, marker: false, call: "ctx.queue.next" },
  join: { container: true, wait: false, marker: false, call: "ctx.join" },
  race: { container: true, wait: false, marker: false, call: "ctx.race" },
  loop: { container: true, wait: false, marker: false, call: "ctx.loop" },
  version: { container: false, wait: false, marker: true, call: "ctx.version" },
  replay: { container: false, wait: false, marker: true, call: "engine.replay" },
  child: { container: false, wait: true, marker: false, call: "ctx.child" },
  checkpoint: { container: false, wait: false, marker: true, call: "ctx.rollbackCheckpoint" },
  rollback: { container: false, wait: false, marker: false, call: "a step's rollback handler" },
};

/** Every entry kind, in the order of EntryDetails. */
export const ENTRY_KINDS = Object.keys(TRAITS) as EntryKind[];

/** What a kind is; undefined for a kind this version does not know (written by a newer one). */
export function traitsOf(kind: string): KindTraits | undefined {
  return Object.hasOwn(TRAITS, kind) ? TRAITS[kind as EntryKind] : undefined;
}

/** True for join, race and loop entries: they hold scopes of their own. */
export function isContainer(kind: string): boolean {
  return traitsOf(kind)?.container === true;
}

/** True for sleeps and queue waits. */
export function isWait(kind: string): boolean {
  return traitsOf(kind)?.wait === true;
}

/** True for marker entries (version pins, replays). */
export function isMarker(kind: string): boolean {
  return traitsOf(kind)?.marker === true;
}

/** What a suspended run waits on: a wait entry's kind, or a step waiting for its next attempt. */
export const WAIT_KINDS = ["sleep", "queue", "child", "retry"] as const satisfies ReadonlyArray<
  EntryKind | "retry"
>;

/** The kind of one wait of a suspended run. */
export type WaitKind = (typeof WAIT_KINDS)[number];

/** A stored row as an entry. Only this engine writes entries, so its kind is one of EntryKind. */
export function asEntry(row: EntryRow): Entry {
  return row as Entry;
}

/** "a, b or c": a closed set as a sentence says it (tool descriptions). */
export function oneOf(values: readonly string[]): string {
  return values.length < 2 ? values.join("") : `${values.slice(0, -1).join(", ")} or ${values.at(-1)}`;
}

/** Stored rows as entries (see asEntry). */
export function asEntries(rows: EntryRow[]): Entry[] {
  return rows as Entry[];
}

/** An entry's detail, typed by its kind; undefined while none is recorded. */
export function detailOf<K extends EntryKind>(entry: EntryOf<K>): EntryDetails[K] | undefined {
  return entry.detail === null ? undefined : (JSON.parse(entry.detail) as EntryDetails[K]);
}

/** Records an entry's detail (written with the entry's next write). */
export function setDetail<K extends EntryKind>(entry: EntryOf<K>, detail: EntryDetails[K]): void {
  entry.detail = JSON.stringify(detail);
}

type AttemptFields = Pick<EntryRow, "attempts" | "kind" | "status" | "startedAt" | "endedAt">;

/**
 * A step's attempts as recorded (none for other kinds). A step that completed on its first attempt stores
 * none (see storedAttempts): that attempt is the entry's own start, end and status.
 */
export function attemptsOf(row: AttemptFields): Attempt[] {
  if (row.attempts) return JSON.parse(row.attempts) as Attempt[];
  if (row.kind === "step" && row.status === "completed" && row.startedAt !== null && row.endedAt !== null)
    return [{ n: 1, startedAt: row.startedAt, status: "completed", endedAt: row.endedAt }];
  return [];
}

/**
 * The attempts of a row an execution goes on with: its last one, still running when it was recorded, is
 * marked interrupted (the process stopped during it), so the next attempt runs again after it.
 */
export function attemptsGoingOn(row: AttemptFields): Attempt[] {
  const attempts = attemptsOf(row);
  const last = attempts.at(-1);
  if (last?.status === "running") {
    last.status = "interrupted";
    last.error = {
      name: "Interrupted",
      message: "The process stopped during this attempt, so it runs again.",
    };
  }
  return attempts;
}

/**
 * The attempts column of a completed step: null when its one attempt says nothing its times and status do
 * not (most steps; about 80 bytes an entry saved), else the attempts as JSON. attemptsOf reads both.
 */
export function storedAttempts(
  row: Pick<EntryRow, "startedAt" | "endedAt">,
  attempts: Attempt[],
): string | null {
  const only = attempts[0];
  const plain =
    attempts.length === 1 &&
    only!.status === "completed" &&
    only!.startedAt === row.startedAt &&
    only!.endedAt === row.endedAt &&
    only!.error === undefined &&
    only!.retryAt === undefined;
  return plain ? null : JSON.stringify(attempts);
}

/** The path of an entry: its scope path, a slash, its name (or just the name at the root). */
export function entryPath(scope: string, name: string): string {
  return scope === "" ? name : `${scope}/${name}`;
}

/** Paths of the scopes nested directly in an entry: a join's or race's branches, a loop's kept iterations. */
export function childScopes(entry: Entry): string[] {
  const path = entryPath(entry.scope, entry.name);
  switch (entry.kind) {
    case "join":
    case "race":
      return (detailOf(entry)?.branches ?? []).map((n) => `${path}[${n}]`);
    case "loop": {
      const detail = detailOf(entry);
      if (!detail) return [];
      const out: string[] = [];
      for (let i = detail.compacted?.iterations ?? 0; i <= detail.iteration; i++) out.push(`${path}#${i}`);
      return out;
    }
    case "step":
    case "sleep":
    case "queue":
    case "version":
    case "replay":
    case "child":
    case "checkpoint":
    case "rollback":
      return [];
    default:
      return assertNever(entry, "entry kind");
  }
}

/** The status an entry cancelled with its container goes back to when a replay runs that container again. */
export function reopenedStatus(entry: Entry): EntryStatus {
  switch (entry.kind) {
    case "sleep":
    case "queue":
    case "child":
      return "waiting";
    case "step":
    case "rollback": {
      const last = attemptsOf(entry).at(-1);
      return last?.retryAt !== undefined && last.status !== "cancelled" ? "retrying" : "running";
    }
    case "join":
    case "race":
    case "loop":
    // markers are recorded completed, so never cancelled
    case "version":
    case "replay":
    case "checkpoint":
      return "running";
    default:
      return assertNever(entry, "entry kind");
  }
}

/**
 * A container of `target` reopened by a replay: back to running with its outcome cleared; a loop restarts
 * at the iteration holding `target`, with the loop state that iteration began with; a race forgets its winner.
 */
export function reopenedContainer(entry: Entry, target: Entry): Entry {
  const next: Entry = { ...entry, status: "running", endedAt: null, output: null, error: null };
  switch (next.kind) {
    case "loop": {
      const detail = detailOf(next);
      if (!detail) break;
      const iteration = Number.parseInt(target.scope.slice(entryPath(next.scope, next.name).length + 1), 10);
      const start = detail.starts?.[String(iteration)];
      if (Number.isInteger(iteration) && start !== undefined)
        setDetail(next, { ...detail, iteration, state: start });
      break;
    }
    case "race": {
      const detail = detailOf(next);
      if (!detail) break;
      const { winner: _winner, ...rest } = detail;
      setDetail(next, rest);
      break;
    }
    case "join":
    case "step":
    case "sleep":
    case "queue":
    case "version":
    case "replay":
    case "child":
    case "checkpoint":
    case "rollback":
      break;
    default:
      return assertNever(next, "entry kind");
  }
  return next;
}

/** The state changes a loop's compaction folded into its entry, or null. */
export function compactedChanges(entry: Entry): { diff: StateDiff; stateSeq: number } | null {
  if (entry.kind !== "loop") return null;
  const compacted = detailOf(entry)?.compacted;
  return compacted && compacted.stateSeq > 0 ? compacted : null;
}

/** A new entry of `kind` at (scope, ordinal), started at `now`, nothing recorded yet. */
export function blankEntry<K extends EntryKind>(
  runId: number,
  seq: number,
  scope: string,
  ordinal: number,
  name: string,
  kind: K,
  status: EntryStatus,
  now: number,
): EntryOf<K> {
  return {
    runId,
    seq,
    scope,
    ordinal,
    name,
    kind,
    status,
    startedAt: now,
    endedAt: null,
    input: null,
    output: null,
    error: null,
    attempts: null,
    detail: null,
    stateSeq: null,
    stateDiff: null,
  };
}
