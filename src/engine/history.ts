// The in-memory history index of an executing run: entries by scope and ordinal, O(1) per lookup.

import type { PackedSteps } from "../storage/packed-steps.js";
import type { EntryRow } from "../storage/store.js";
import { asEntries, asEntry, type Entry } from "./entries.js";
import { textProblem } from "./query-input.js";

/** Separator rules: names are path segments, so they may not contain the path syntax. */
const FORBIDDEN = /[/[\]#\u0000-\u001f]/;

/** Why a name is invalid, or null. */
export function nameProblem(name: unknown): string | null {
  if (typeof name !== "string") return `names are strings, got ${name === null ? "null" : typeof name}.`;
  if (name.length === 0) return "names cannot be empty.";
  if (name.length > 200) return `names are at most 200 characters (this one has ${name.length}).`;
  if (FORBIDDEN.test(name))
    return 'names cannot contain "/", "[", "]", "#" or control characters (they build history paths); use "-" or "." instead.';
  const text = textProblem(name);
  if (text) return `names are stored as text, and this one cannot be: ${text}.`;
  return null;
}

/** What RunExecution.replayedStep answers for a call that is not a recorded completed step replayed. */
export const NOT_REPLAYED = Symbol("not replayed");

/** A scope of history: the root, a join/race branch (`name[branch]`) or a loop iteration (`name#i`). */
export class Scope {
  /** Next ordinal to hand out. */
  next = 0;
  /**
   * Names the calls here used, for refusing a duplicate (a list while few, then a Set); null while every call so far replayed the entry
   * recorded at its ordinal under that entry's name (see useName), which needs no set.
   */
  private used: string[] | Set<string> | null = null;
  /** Calls from ordinal 0 that replayed their recorded entry under its name (their names are not in `used`). */
  private replayedNames = 0;
  cancelled = false;
  /** A ctx.rollbackCheckpoint was reached in this scope: steps after it here (and below) may carry handlers. */
  checkpoint = false;
  readonly children: Scope[] = [];
  /** Entries recorded before this execution (replaying while next < loaded). */
  readonly loaded: number;
  private controller: AbortController | null = null;

  constructor(
    readonly path: string,
    /**
     * Entries by ordinal: those loaded from history, then those this execution adds. Read them with entry():
     * the root's packed steps are undefined here until read.
     */
    readonly entries: Array<Entry | undefined>,
    readonly parent: Scope | null,
    /** The root's leading steps as loaded, packed (ordinals 0..count-1 of `entries`), or null. */
    readonly packed: PackedSteps | null = null,
  ) {
    this.loaded = entries.length;
    parent?.children.push(this);
  }

  /** The entry at `ordinal` (a packed step becomes an object, kept in `entries`, when read here). */
  entry(ordinal: number): Entry | undefined {
    const row = this.entries[ordinal];
    if (row !== undefined || this.packed === null || ordinal >= this.packed.count || ordinal < 0) return row;
    return (this.entries[ordinal] = this.packed.entryAt(ordinal) as Entry);
  }

  /** True when the entry loaded at `ordinal` is named `name` (a packed step stays packed). */
  private recordedNameIs(ordinal: number, name: string): boolean {
    const row = this.entries[ordinal];
    if (row !== undefined) return row.name === name;
    return this.packed !== null && this.packed.name(ordinal) === name;
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

  /** True once a rollback checkpoint was reached in this scope or one enclosing it. */
  get armed(): boolean {
    for (let s: Scope | null = this; s; s = s.parent) if (s.checkpoint) return true;
    return false;
  }

  get replaying(): boolean {
    return this.next < this.loaded;
  }

  /** useName for a call replaying the entry loaded at `ordinal` under its own name (the caller checked). */
  useRecordedName(name: string, ordinal: number): boolean {
    if (this.used !== null || ordinal !== this.replayedNames) return this.useName(name, ordinal);
    this.replayedNames++;
    return true;
  }

  /**
   * Notes that the call taking `ordinal` uses `name`; false if a call here used it already (a duplicate).
   * While the calls replay the entries recorded from ordinal 0 under their own names, no set is kept: those
   * names are distinct (each call that recorded one was refused as a duplicate otherwise, rollback entries
   * live in their own scope), so only a count moves. The first other call (a new entry, another name, a
   * ctx.removed) builds the set from the entries replayed so far and checks against it, as before.
   */
  useName(name: string, ordinal: number): boolean {
    if (this.used === null) {
      if (ordinal === this.replayedNames && ordinal < this.loaded && this.recordedNameIs(ordinal, name)) {
        this.replayedNames++;
        return true;
      }
      this.used = [];
      for (let i = 0; i < this.replayedNames; i++)
        this.useNew(this.entries[i]?.name ?? this.packed!.name(i)!);
    }
    return this.useNew(name);
  }

  /** Adds `name` to the names used; false if it is there already. */
  private useNew(name: string): boolean {
    const used = this.used!;
    if (Array.isArray(used)) {
      if (used.includes(name)) return false;
      used.push(name);
      if (used.length >= FEW_NAMES) this.used = new Set(used);
      return true;
    }
    if (used.has(name)) return false;
    used.add(name);
    return true;
  }
}

/** Up to this many names a scope keeps them in a list (a short run's calls); from then on in a Set. */
const FEW_NAMES = 16;

/** All of a run's entries, grouped by scope path and ordered by ordinal. */
export class HistoryIndex {
  private readonly byScope = new Map<string, Array<Entry | undefined>>();
  maxSeq = 0;
  maxStateSeq = 0;

  /**
   * Takes `rows` over: a history of root entries only, each at its index (a long sequence), is the root's
   * list. `packed` holds the root's first entries (seqs 1..count): their places in the list stay undefined
   * until read (Scope.entry, all()).
   */
  constructor(
    rows: EntryRow[],
    readonly packed: PackedSteps | null = null,
  ) {
    // The root's packed places in one allocation (a push each grew the list a dozen times: 0.3 ms, 300 KB).
    if (packed) this.byScope.set("", new Array<Entry | undefined>(packed.count).fill(undefined));
    if (this.adoptRoot(rows)) return;
    // As add() does, row by row; consecutive rows mostly share a scope, so its list is looked up once a run.
    let path: string | null = null;
    let list: Array<Entry | undefined> = [];
    let maxSeq = 0;
    let maxStateSeq = 0;
    for (const stored of rows) {
      const row = asEntry(stored);
      if (row.scope !== path) {
        path = row.scope;
        list = this.scope(path);
      }
      list[row.ordinal] = row;
      if (row.seq > maxSeq) maxSeq = row.seq;
      if (row.stateSeq !== null && row.stateSeq > maxStateSeq) maxStateSeq = row.stateSeq;
    }
    this.maxSeq = Math.max(maxSeq, this.packed?.count ?? 0);
    this.maxStateSeq = maxStateSeq;
  }

  /** Uses `rows` as the root scope's list when they are exactly that (root scope, ordinal = index): no copy. */
  private adoptRoot(rows: EntryRow[]): boolean {
    if (this.packed) return false;
    let maxSeq = 0;
    let maxStateSeq = 0;
    for (let i = 0; i < rows.length; i++) {
      const row = rows[i]!;
      if (row.scope !== "" || row.ordinal !== i) return false;
      if (row.seq > maxSeq) maxSeq = row.seq;
      if (row.stateSeq !== null && row.stateSeq > maxStateSeq) maxStateSeq = row.stateSeq;
    }
    if (rows.length > 0) this.byScope.set("", asEntries(rows));
    this.maxSeq = maxSeq;
    this.maxStateSeq = maxStateSeq;
    return true;
  }

  add(stored: EntryRow): void {
    const row = asEntry(stored);
    let list = this.byScope.get(row.scope);
    if (!list) this.byScope.set(row.scope, (list = []));
    list[row.ordinal] = row;
    if (row.seq > this.maxSeq) this.maxSeq = row.seq;
    if (row.stateSeq !== null && row.stateSeq > this.maxStateSeq) this.maxStateSeq = row.stateSeq;
  }

  /** The (shared, growing) entry list of a scope. */
  scope(path: string): Array<Entry | undefined> {
    let list = this.byScope.get(path);
    if (!list) this.byScope.set(path, (list = []));
    return list;
  }

  /** Every entry held, scope by scope (not in seq order). */
  all(): Entry[] {
    const out: Entry[] = [];
    const root = this.byScope.get("");
    if (this.packed && root)
      for (let i = 0; i < this.packed.count; i++) root[i] ??= this.packed.entryAt(i) as Entry;
    for (const list of this.byScope.values()) for (const row of list) if (row) out.push(row);
    return out;
  }

  /** Removes a scope and every scope nested in it; returns the removed rows. */
  removeTree(path: string): Entry[] {
    const out: Entry[] = [];
    for (const [key, list] of this.byScope) {
      if (key === path || key.startsWith(`${path}/`)) {
        for (const row of list) if (row) out.push(row);
        this.byScope.delete(key);
      }
    }
    return out;
  }
}
