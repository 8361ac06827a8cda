// watchRun: the one way to wait until something about a run holds (it changed, it finished, a message
// it got was consumed), on the engine's injected clock, with one teardown.
//
// IMPORTANT: the condition is looked at again on every status event of the run, on every change another
// process makes to the database (the store's change notification: the run may execute elsewhere), and,
// with `entries`, on every entry the run commits here. It is never polled; a timeout is measured on the
// engine's clock (a FakeClock drives it).

import { InvalidInputError, RunNotFoundError } from "../errors.js";
import type { RunRow, Store } from "../storage/store.js";
import { afterClock, type Clock } from "./clock.js";
import type { EventHub } from "./events.js";
import { describe } from "./query-input.js";

/** What a watch needs from its engine. */
export interface WatchSource {
  readonly store: Store;
  readonly events: EventHub;
  readonly clock: Clock;
  /** Runs executing in this process (their changes arrive as this process's events). */
  readonly active: ReadonlyMap<number, unknown>;
  /**
   * While the event of a run this process just finished is delivered: what that finishing write committed
   * (null otherwise). Read synchronously by the watches the event wakes.
   */
  readonly ending?: RunEnd | null;
}

/** A run's end as its finishing write committed it: enough for `result()`. */
export type RunEnd = Pick<RunRow, "id" | "workflow" | "key" | "status" | "output" | "error">;

/** A condition on a run: a truthy value ends the watch with that value. */
export type WatchCondition<T> = (run: RunRow) => T | Promise<T>;

export interface WatchOptions {
  /** Longest wait in ms of the engine's clock. Default: no limit. */
  timeout?: number;
  /** Ends the watch early (e.g. the MCP request was cancelled). */
  signal?: AbortSignal;
  /** Also look after every entry this run commits in this process, not only after status changes. */
  entries?: boolean;
  /** Called with the run each time it was read, before the condition is applied (progress reports). */
  onRead?(run: RunRow): void;
  /**
   * The condition (and `onRead`, and the result's `run`) only read the fields of RunEnd: when this process
   * finishes the run, they get what its finishing write committed instead of a read of the row.
   */
  endFields?: boolean;
  /**
   * The caller saw the run executing in this process (in `active`, so not finished): the first look is
   * the one its next status event (or the timeout, or the signal) causes, not a read at once.
   */
  executingHere?: boolean;
}

/** How a watch ended: the condition held (`value` is what it returned), the timeout passed, or the signal fired. */
export type WatchResult<T> =
  | { reason: "until"; value: NonNullable<T>; run: RunRow }
  | { reason: "timeout" | "aborted"; value: undefined; run: RunRow };

/** Resolves once `until(run)` is truthy, the timeout passes or the signal fires; rejects if the run is gone. */
export function watchRun<T>(
  source: WatchSource,
  runId: number,
  until: WatchCondition<T>,
  options: WatchOptions = {},
): Promise<WatchResult<T>> {
  const timeout = options.timeout;
  if (timeout !== undefined && !(typeof timeout === "number" && Number.isFinite(timeout) && timeout >= 0)) {
    return Promise.reject(
      new InvalidInputError(
        `watchRun({ timeout }) takes milliseconds as a number of 0 or more (e.g. { timeout: 30_000 }); got ${describe(timeout)}.`,
      ),
    );
  }
  if (typeof until !== "function") {
    return Promise.reject(
      new InvalidInputError("watchRun(id, until) needs a function: (run) => true once the wait is over."),
    );
  }
  return new Promise<WatchResult<T>>((resolve, reject) => {
    new Watch(source, runId, until, options, resolve, reject).begin();
  });
}

/**
 * One watch: its state and its looks at the run. An object with methods rather than closures, since every
 * `result()` makes one (a thousand runs awaited at once made a thousand sets of nine closures).
 */
class Watch<T> {
  private settled = false;
  private checking = false;
  private again = false;
  private ending: "timeout" | "aborted" | null = null;
  private offRun: (() => void) | null = null;
  private offEntries: (() => void) | null = null;
  private cancelTimeout: (() => void) | null = null;
  private onAbort: (() => void) | null = null;

  constructor(
    private readonly source: WatchSource,
    private readonly runId: number,
    private readonly until: WatchCondition<T>,
    private readonly options: WatchOptions,
    private readonly resolve: (result: WatchResult<T>) => void,
    private readonly reject: (error: unknown) => void,
  ) {}

  begin(): void {
    const { source, runId, options } = this;
    this.offRun = source.events.onRun(runId, (e) => {
      // Another process's commit: only a run this process is not executing can have moved on there.
      if (e.type === "external" && source.active.has(runId)) return;
      void this.check();
    });
    if (options.entries) {
      this.offEntries = source.events.on((e) => {
        if (e.type === "entry" && e.runId === runId) void this.check();
      });
    }
    if (options.timeout !== undefined)
      this.cancelTimeout = afterClock(source.clock, options.timeout, () => this.end("timeout"));
    if (options.signal?.aborted) this.end("aborted");
    else if (options.signal) {
      this.onAbort = () => this.end("aborted");
      options.signal.addEventListener("abort", this.onAbort);
    }
    if (!options.executingHere || this.ending) void this.check();
  }

  private teardown(): void {
    this.settled = true;
    this.offRun?.();
    this.offEntries?.();
    this.cancelTimeout?.();
    if (this.onAbort) this.options.signal?.removeEventListener("abort", this.onAbort);
  }

  private async read(): Promise<RunRow> {
    // Synchronous up to here: a check started by the finishing event sees `ending` (a later one reads).
    const end = this.options.endFields ? this.source.ending : null;
    const row = end?.id === this.runId ? (end as RunRow) : await this.source.store.getRun(this.runId);
    if (!row) throw new RunNotFoundError(this.runId);
    this.options.onRead?.(row);
    return row;
  }

  /** One look at a time; a change noticed meanwhile is looked at right after, never dropped. */
  private async check(): Promise<void> {
    if (this.settled) return;
    if (this.checking) {
      this.again = true;
      return;
    }
    this.checking = true;
    try {
      do {
        this.again = false;
        const row = await this.read();
        if (this.settled) return;
        const value = await this.until(row);
        if (this.settled) return;
        if (value) {
          this.teardown();
          this.resolve({ reason: "until", value: value as NonNullable<T>, run: row });
          return;
        }
        if (this.ending) {
          this.teardown();
          this.resolve({ reason: this.ending, value: undefined, run: row });
          return;
        }
      } while (this.again);
    } catch (err) {
      if (this.settled) return;
      this.teardown();
      this.reject(err);
    } finally {
      this.checking = false;
    }
  }

  /** Timeout and abort end the watch after one last look (which still wins if the condition holds). */
  private end(why: "timeout" | "aborted"): void {
    if (this.settled || this.ending) return;
    this.ending = why;
    void this.check();
  }
}
