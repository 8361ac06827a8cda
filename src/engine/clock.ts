// Time is injected: the engine never reads the wall clock directly, so tests drive it.

/** A source of time in milliseconds since the epoch. */
export interface Clock {
  now(): number;
  /** Optional: called by the engine so a fake clock can wake the scheduler when it moves. */
  onAdvance?(listener: () => void): () => void;
}

/** The wall clock. */
export const systemClock: Clock = { now: () => Date.now() };

/** A clock that moves only when told to; advancing it wakes every engine that uses it. */
export class FakeClock implements Clock {
  private time: number;
  private readonly listeners = new Set<() => void>();

  constructor(start: number | Date = Date.UTC(2026, 0, 1)) {
    this.time = typeof start === "number" ? start : start.getTime();
  }

  now(): number {
    return this.time;
  }

  /** Moves time forward by `ms` (or to a date) and wakes listeners. */
  advance(ms: number): void {
    this.time += ms;
    for (const l of this.listeners) l();
  }

  set(to: number | Date): void {
    this.time = typeof to === "number" ? to : to.getTime();
    for (const l of this.listeners) l();
  }

  onAdvance(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

/**
 * Calls `fn` once the clock reaches `now() + ms`: a fake clock fires it when advanced past that time,
 * the wall clock through a timer. Returns the cancel function.
 */
export function afterClock(clock: Clock, ms: number, fn: () => void): () => void {
  const at = clock.now() + ms;
  let timer: NodeJS.Timeout | undefined;
  let done = false;
  const cancel = () => {
    done = true;
    clearTimeout(timer);
    off?.();
  };
  const check = () => {
    if (done) return;
    if (clock.now() >= at) {
      cancel();
      fn();
      return;
    }
    // Not due on this clock yet (a fake one moves only when told): look again when it could be.
    clearTimeout(timer);
    timer = setTimeout(check, Math.min(Math.max(1, at - clock.now()), 2_000_000_000));
  };
  const off = clock.onAdvance?.(check);
  queueMicrotask(check); // never before the caller holds the cancel function
  return cancel;
}
