// The in-memory history index of an executing run: entries by scope and ordinal, O(1) per lookup.

import type { EntryRow } from "../storage/store.js";
import { fromJson } from "./json.js";

/** Kinds of history entries. */
export type EntryKind = "step" | "sleep" | "queue" | "join" | "race" | "loop" | "version" | "replay";

/** Entry statuses as recorded. */
export type EntryStatus = "running" | "retrying" | "waiting" | "completed" | "failed" | "cancelled";

/** An error as recorded: enough to read, never a live object. */
export interface ErrorInfo {
  name: string;
  message: string;
  stack?: string;
  code?: string;
  details?: Record<string, unknown>;
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

/** Separator rules: names are path segments, so they may not contain the path syntax. */
const FORBIDDEN = /[/[\]#\u0000-\u001f]/;

/** Why a name is invalid, or null. */
export function nameProblem(name: unknown): string | null {
  if (typeof name !== "string") return `names are strings, got ${name === null ? "null" : typeof name}.`;
  if (name.length === 0) return "names cannot be empty.";
  if (name.length > 200) return `names are at most 200 characters (this one has ${name.length}).`;
  if (FORBIDDEN.test(name))
    return 'names cannot contain "/", "[", "]", "#" or control characters (they build history paths); use "-" or "." instead.';
  return null;
}

/** The path of an entry: its scope path, a slash, its name (or just the name at the root). */
export function entryPath(scope: string, name: string): string {
  return scope === "" ? name : `${scope}/${name}`;
}

/** A scope of history: the root, a join/race branch (`name[branch]`) or a loop iteration (`name#i`). */
export class Scope {
  /** Next ordinal to hand out. */
  next = 0;
  readonly names = new Set<string>();
  cancelled = false;
  readonly children: Scope[] = [];
  /** Entries recorded before this execution (replaying while next < loaded). */
  readonly loaded: number;
  private controller: AbortController | null = null;

  constructor(
    readonly path: string,
    /** Entries by ordinal: those loaded from history, then those this execution adds. */
    readonly entries: Array<EntryRow | undefined>,
    readonly parent: Scope | null,
  ) {
    this.loaded = entries.length;
    parent?.children.push(this);
  }

  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.cancelled) this.controller.abort();
    }
    return this.controller.signal;
  }

  /** Cancels this scope and every scope below it. */
  cancel(reason: unknown): void {
    if (this.cancelled) return;
    this.cancelled = true;
    this.controller?.abort(reason);
    for (const c of this.children) c.cancel(reason);
  }

  isWithin(other: Scope): boolean {
    for (let s: Scope | null = this; s; s = s.parent) if (s === other) return true;
    return false;
  }

  get replaying(): boolean {
    return this.next < this.loaded;
  }
}

/** All of a run's entries, grouped by scope path and ordered by ordinal. */
export class HistoryIndex {
  private readonly byScope = new Map<string, Array<EntryRow | undefined>>();
  maxSeq = 0;
  maxStateSeq = 0;

  constructor(rows: EntryRow[]) {
    for (const row of rows) this.add(row);
  }

  add(row: EntryRow): void {
    let list = this.byScope.get(row.scope);
    if (!list) this.byScope.set(row.scope, (list = []));
    list[row.ordinal] = row;
    if (row.seq > this.maxSeq) this.maxSeq = row.seq;
    if (row.stateSeq !== null && row.stateSeq > this.maxStateSeq) this.maxStateSeq = row.stateSeq;
  }

  /** The (shared, growing) entry list of a scope. */
  scope(path: string): Array<EntryRow | undefined> {
    let list = this.byScope.get(path);
    if (!list) this.byScope.set(path, (list = []));
    return list;
  }

  /** Every entry held, scope by scope (not in seq order). */
  all(): EntryRow[] {
    const out: EntryRow[] = [];
    for (const list of this.byScope.values()) for (const row of list) if (row) out.push(row);
    return out;
  }

  /** Removes a scope and every scope nested in it; returns the removed rows. */
  removeTree(path: string): EntryRow[] {
    const out: EntryRow[] = [];
    for (const [key, list] of this.byScope) {
      if (key === path || key.startsWith(`${path}/`)) {
        for (const row of list) if (row) out.push(row);
        this.byScope.delete(key);
      }
    }
    return out;
  }
}

export function parseAttempts(row: EntryRow): Attempt[] {
  return row.attempts ? (JSON.parse(row.attempts) as Attempt[]) : [];
}

export function parseDetail<T extends object>(row: EntryRow): T | undefined {
  return fromJson<T | undefined>(row.detail);
}

/** Turns anything thrown into a recordable error. */
export function errorInfo(err: unknown): ErrorInfo {
  if (err instanceof Error) {
    const info: ErrorInfo = { name: err.name, message: err.message };
    if (err.stack) info.stack = err.stack;
    const code = (err as { code?: unknown }).code;
    if (typeof code === "string") info.code = code;
    const details = (err as { details?: unknown }).details;
    if (details && typeof details === "object") {
      try {
        info.details = JSON.parse(JSON.stringify(details)) as Record<string, unknown>;
      } catch {
        // details that do not serialise are left out
      }
    }
    return info;
  }
  let message: string;
  try {
    message = typeof err === "string" ? err : JSON.stringify(err);
  } catch {
    message = String(err);
  }
  return { name: "NonErrorThrown", message: `A non-Error value was thrown: ${message}` };
}
