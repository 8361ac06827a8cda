// Group commit: every run's writes of one event-loop turn go to the store in one transaction.
//
// IMPORTANT: `flush()` resolves only after the batch holding everything written before it has
// committed, so a step's promise resolves after its record is durable. Entry writes are coalesced
// by (run, seq): a later write of the same entry in one turn replaces the earlier one. One commit is
// in flight at a time; writes made meanwhile form the next batch.

import { LeaseLostError } from "../errors.js";
import type {
  BatchResult,
  CreateResult,
  CreateRun,
  EntryRow,
  MessageResult,
  NewMessage,
  RunPatch,
  Store,
  WriteBatch,
} from "../storage/store.js";
import { isReplayEntry } from "../storage/store.js";
import type { Attempt } from "./entries.js";
import { NO_FAILURES, Pending } from "./pending-batch.js";

/** Longest stretch of commits made in microtasks before one waits for a turn of the event loop. */
const TURN_MS = 20;

/** What flush() answers when nothing is waiting to be committed. */
const ALL_COMMITTED: Promise<ReadonlySet<number>> = Promise.resolve(NO_FAILURES);

/** A completed step loaded for replay lacks columns, so writing it back would blank them: an engine bug. */
function partialWrite(row: EntryRow): Error {
  return new Error(
    `internal: entry ${row.seq} ("${row.name}") of run ${row.runId} was loaded for replay without all its columns and cannot be written back; read it whole with Store.getEntry first.`,
  );
}

/** What the queue tells its owner when a commit fails for some runs. */
/** These runs' writes were not stored; their executions must stop and reload later. */
export type WriteFailureHandler = (runIds: number[], error: unknown) => void;

/** Collects writes and commits them once per event-loop turn. */
export class WriteQueue {
  private pending = new Pending();
  private scheduled = false;
  private inFlight: Promise<void> | null = null;
  /** Commits done (for figures). */
  commits = 0;
  /** Told how long each commit that wrote something took, in seconds (metrics). */
  onCommit: ((seconds: number) => void) | null = null;

  constructor(
    private readonly store: Store,
    private readonly now: () => number,
    private readonly onFailure: WriteFailureHandler,
    /**
     * Whether leases must be checked in the database: false while this process's leases are known to
     * be valid (renewed recently), since nobody else can claim a run before its lease expires.
     */
    private readonly leasesInDoubt: () => boolean = () => true,
    /** True when at most one run executes here, so waiting a turn to group commits gains nothing. */
    private readonly solo: () => boolean = () => false,
  ) {}

  /** Writes an entry row (full row; replaces an earlier write of the same entry this turn). */
  entry(row: EntryRow, owner: string): void {
    if (isReplayEntry(row)) throw partialWrite(row);
    this.markers.delete(row);
    this.pending.entries.add(row);
    this.pending.owned.set(row.runId, owner);
    this.schedule();
  }

  /**
   * Writes a start marker (a step or branch that began) only if it is still unfinished one turn
   * later: most steps finish within a turn, and their completion write makes the marker needless.
   * Best effort by design: a marker shows an attempt that a crash interrupted.
   */
  marker(row: EntryRow, owner: string, attempts?: readonly Attempt[]): void {
    if (isReplayEntry(row)) throw partialWrite(row);
    if (this.pending.entries.has(row)) return;
    this.markers.set(row, { owner, status: row.status, aged: false, attempts });
    this.schedule();
  }

  /**
   * The attempts of a start marker not written yet (an attempt that began less than a turn ago), which
   * the row itself does not hold until the marker is written.
   */
  markedAttempts(row: EntryRow): readonly Attempt[] | undefined {
    return this.markers.get(row)?.attempts;
  }

  private readonly markers = new Map<
    EntryRow,
    { owner: string; status: string; aged: boolean; attempts: readonly Attempt[] | undefined }
  >();

  /** Moves markers that outlived a turn into the batch; keeps the young ones for the next. */
  private ageMarkers(): void {
    for (const [row, m] of this.markers) {
      if (row.status !== m.status) {
        this.markers.delete(row);
      } else if (m.aged) {
        this.markers.delete(row);
        if (m.attempts) row.attempts = JSON.stringify(m.attempts);
        this.pending.entries.add(row);
        this.pending.owned.set(row.runId, m.owner);
      } else m.aged = true;
    }
  }

  /** Merges a partial run update into this turn's patch for the run. */
  patch(patch: RunPatch, owner: string | null): void {
    const runs = (this.pending.runs ??= new Map());
    const prev = runs.get(patch.id);
    runs.set(patch.id, prev ? Object.assign(prev, patch) : { ...patch });
    if (owner) this.pending.owned.set(patch.id, owner);
    this.schedule();
  }

  /** Sets tags of a run this process executes (step.tag); they commit with the step's record. */
  tags(runId: number, tags: Record<string, string>, owner: string): void {
    for (const [name, value] of Object.entries(tags)) this.pending.more.tags.push({ runId, name, value });
    this.pending.owned.set(runId, owner);
    this.schedule();
  }

  consume(messageId: number, runId: number, bySeq: number): void {
    this.pending.more.consume.push({ messageId, runId, bySeq });
    this.schedule();
  }

  unconsume(messageIds: number[]): void {
    this.pending.more.unconsume.push(...messageIds);
    this.schedule();
  }

  deleteEntries(runId: number, seqs: number[]): void {
    if (seqs.length === 0) return;
    this.pending.more.deleteEntries.push({ runId, seqs });
    this.schedule();
  }

  /** Stores a request for the process that owns (or next claims) the run; resolves its id. */
  request(runId: number, kind: string, args: string): Promise<number> {
    return new Promise((resolve, reject) => {
      this.pending.more.requests.push({ runId, kind, args, d: { resolve, reject } });
      this.schedule();
    });
  }

  /** Keeps a record of a refused message (for diagnosis); written with the next batch. */
  rejection(r: WriteBatch["rejections"][number]): void {
    this.pending.more.rejections.push(r);
    this.schedule();
  }

  requestDone(id: number, result: unknown): void {
    this.pending.more.requestsDone.push({ id, result: JSON.stringify(result) });
    this.schedule();
  }

  create(req: CreateRun): Promise<CreateResult> {
    return new Promise((resolve, reject) => {
      this.pending.more.creates.push({ req, d: { resolve, reject } });
      this.schedule();
    });
  }

  message(req: NewMessage): Promise<MessageResult> {
    return new Promise((resolve, reject) => {
      this.pending.more.messages.push({ req, d: { resolve, reject } });
      this.schedule();
    });
  }

  /**
   * Resolves once everything written so far is committed, with the ids of runs whose writes were
   * dropped instead (their lease was lost or the commit failed); usually empty.
   */
  flush(): Promise<ReadonlySet<number>> {
    // Nothing written since the last commit and none under way: all of it is committed already. (A resume
    // flushes after claiming runs it wrote nothing for; that waited a turn of the event loop.)
    if (this.inFlight === null && this.pending.done === null && this.pending.isEmpty()) return ALL_COMMITTED;
    this.schedule();
    // With a single run executing there is nobody to share a commit with: commit as soon as the
    // current microtasks settle instead of waiting for the next turn of the event loop. Not for longer than
    // TURN_MS at a stretch: a run whose steps return at once would never let the loop turn, and timers
    // (another process's cancel noticed by the change watcher, the lease heartbeat) and sockets wait on it.
    if (!this.soonScheduled && this.solo() && performance.now() - this.lastTurn < TURN_MS) {
      this.soonScheduled = true;
      queueMicrotask(() => {
        this.soonScheduled = false;
        this.drain();
      });
    }
    return this.pending.flushed();
  }

  private soonScheduled = false;

  /** When the event loop last ran a commit of this queue (a turn of its own, not a microtask). */
  private lastTurn = performance.now();

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.lastTurn = performance.now();
      this.drain();
    });
  }

  private drain(): void {
    if (this.inFlight) {
      void this.inFlight.then(this.scheduleIfPending);
      return;
    }
    this.ageMarkers();
    const batch = this.pending;
    if (this.markers.size > 0) this.schedule();
    if (batch.isEmpty() && !batch.done) return;
    this.pending = new Pending();
    // Never left in flight: commit() does not reject, and whatever its handlers threw still lets the next batch go.
    this.inFlight = this.commit(batch).then(this.landed, this.landed);
  }

  /** The commit in flight is done: the next batch may go. */
  private readonly landed = (): void => {
    this.inFlight = null;
    this.scheduleIfPending();
  };

  private readonly scheduleIfPending = (): void => {
    if (!this.pending.isEmpty() || this.pending.done) this.schedule();
  };

  /**
   * Commits a batch (never rejects); a lost lease drops that run's writes and the rest is tried again. Written
   * with then() rather than async frames: a sequential step's commit is on its path, and the frames were a
   * sixth of what it allocated.
   */
  private commit(batch: Pending): Promise<void> {
    const started = performance.now();
    let answer: Promise<BatchResult>;
    try {
      answer = batch.isEmpty()
        ? Promise.resolve(NOTHING_STORED)
        : this.store.commit(batch.toBatch(this.now(), this.leasesInDoubt()));
    } catch (err) {
      answer = Promise.reject(err);
    }
    return answer.then(
      (result) => {
        if (!batch.isEmpty()) this.onCommit?.((performance.now() - started) / 1000);
        this.commits++;
        this.stored(batch, result);
      },
      (err: unknown) => {
        if (err instanceof LeaseLostError && batch.owned.has(err.runId)) {
          batch.dropRun(err.runId);
          batch.fail(err.runId);
          this.onFailure([err.runId], err);
          return this.commit(batch);
        }
        this.failed(batch, err);
      },
    );
  }

  /** The commit failed: every run in the batch is told, and every waiting promise rejected or settled. */
  private failed(batch: Pending, err: unknown): void {
    const ids = batch.runIds();
    for (const id of ids) batch.fail(id);
    this.onFailure(ids, err);
    for (const c of batch.rare.creates) c.d.reject(err);
    for (const m of batch.rare.messages) m.d.reject(err);
    for (const r of batch.rare.requests) r.d.reject(err);
    batch.settle();
  }

  private stored(batch: Pending, result: BatchResult): void {
    batch.rare.creates.forEach((c, i) => {
      c.d.resolve(result.created[i]!);
    });
    batch.rare.messages.forEach((m, i) => {
      m.d.resolve(result.messages[i]!);
    });
    batch.rare.requests.forEach((r, i) => {
      r.d.resolve(result.requests[i]!);
    });
    batch.settle();
  }
}

/** What committing an empty batch (one flushed only to wait for the one before) stores. */
const NOTHING_STORED: BatchResult = Object.freeze({ created: [], messages: [], requests: [] }) as BatchResult;
