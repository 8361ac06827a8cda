// One batch of the write queue: the writes of one event-loop turn, handed to the store as one WriteBatch.
// Its containers are made on first use: a sequential step's commit holds one entry and nothing else.

import type {
  CreateResult,
  CreateRun,
  EntryRow,
  MessageResult,
  NewMessage,
  RunPatch,
  WriteBatch,
} from "../storage/store.js";

/** A promise's settle functions, kept by the batch until its commit answers. */
export interface Deferred<T> {
  resolve(value: T): void;
  reject(error: unknown): void;
}

/** Writes other than entries and run patches: made on a batch's first such write (a step's batch has none). */
class RareWrites {
  creates: Array<{ req: CreateRun; d: Deferred<CreateResult> }> = [];
  messages: Array<{ req: NewMessage; d: Deferred<MessageResult> }> = [];
  consume: WriteBatch["consume"] = [];
  unconsume: number[] = [];
  deleteEntries: WriteBatch["deleteEntries"] = [];
  requests: Array<WriteBatch["requests"][number] & { d: Deferred<number> }> = [];
  requestsDone: WriteBatch["requestsDone"] = [];
  rejections: WriteBatch["rejections"] = [];
  tags: WriteBatch["tags"] = [];

  isEmpty(): boolean {
    return (
      this.creates.length === 0 &&
      this.messages.length === 0 &&
      this.consume.length === 0 &&
      this.unconsume.length === 0 &&
      this.deleteEntries.length === 0 &&
      this.requests.length === 0 &&
      this.requestsDone.length === 0 &&
      this.rejections.length === 0 &&
      this.tags.length === 0
    );
  }
}

/** What a batch without rare writes reads instead (never written to). */
const NO_RARE_WRITES: Readonly<RareWrites> = (() => {
  const none = new RareWrites();
  for (const list of Object.values(none)) Object.freeze(list);
  return Object.freeze(none);
})();
/** An empty list a batch hands the store (never written to). */
const NONE: never[] = Object.freeze([]) as unknown as never[];
/** What a batch resolves its flushers with when no run's writes were dropped (the usual case). */
export const NO_FAILURES: ReadonlySet<number> = new Set<number>();

/** One batch's writes. Its containers are made on first use: a sequential step's commit holds one entry. */
export class Pending {
  /** Keyed by the row object: an execution writes one object per entry, so identity coalesces its writes. */
  entries = new Set<EntryRow>();
  runs: Map<number, RunPatch> | null = null;
  private rareWrites: RareWrites | null = null;
  owned = new Map<number, string>();
  /** One promise per batch, shared by everyone who flushes into it. */
  done: Promise<ReadonlySet<number>> | null = null;
  private resolveDone: ((failed: ReadonlySet<number>) => void) | null = null;
  /** Runs whose writes in this batch were dropped (lease lost, or the commit failed); null while none. */
  failed: Set<number> | null = null;

  /** The batch's rare writes, to add to (made on first use). */
  get more(): RareWrites {
    this.rareWrites ??= new RareWrites();
    return this.rareWrites;
  }

  /** The batch's rare writes, to read. */
  get rare(): Readonly<RareWrites> {
    return this.rareWrites ?? NO_RARE_WRITES;
  }

  /** The batch's shared flush promise (created on first use). */
  flushed(): Promise<ReadonlySet<number>> {
    if (!this.done) this.done = new Promise((r) => (this.resolveDone = r));
    return this.done;
  }

  settle(): void {
    this.resolveDone?.(this.failed ?? NO_FAILURES);
  }

  fail(runId: number): void {
    (this.failed ??= new Set()).add(runId);
  }

  isEmpty(): boolean {
    return (
      this.entries.size === 0 &&
      (this.runs === null || this.runs.size === 0) &&
      (this.rareWrites === null || this.rareWrites.isEmpty())
    );
  }

  /** Drops every write of one run (its lease is gone); returns the run's flushers untouched. */
  dropRun(runId: number): void {
    for (const e of this.entries) if (e.runId === runId) this.entries.delete(e);
    this.runs?.delete(runId);
    const rare = this.rareWrites;
    if (rare) {
      rare.consume = rare.consume.filter((c) => c.runId !== runId);
      rare.deleteEntries = rare.deleteEntries.filter((d) => d.runId !== runId);
      rare.tags = rare.tags.filter((t) => t.runId !== runId);
    }
    this.owned.delete(runId);
  }

  toBatch(now: number, checkLeases: boolean): WriteBatch {
    const rare = this.rare;
    return {
      now,
      creates: rare.creates.length ? rare.creates.map((c) => c.req) : NONE,
      messages: rare.messages.length ? rare.messages.map((m) => m.req) : NONE,
      entries: [...this.entries],
      deleteEntries: rare.deleteEntries,
      consume: rare.consume,
      unconsume: rare.unconsume,
      runs: this.runs ? [...this.runs.values()] : NONE,
      requestsDone: rare.requestsDone,
      rejections: rare.rejections,
      tags: rare.tags,
      requests: rare.requests.length
        ? rare.requests.map(({ runId, kind, args }) => ({ runId, kind, args }))
        : NONE,
      leases: checkLeases ? [...this.owned].map(([runId, owner]) => ({ runId, owner })) : NONE,
    };
  }

  runIds(): number[] {
    const ids = new Set<number>(this.owned.keys());
    for (const e of this.entries) ids.add(e.runId);
    if (this.runs) for (const id of this.runs.keys()) ids.add(id);
    return [...ids];
  }
}
