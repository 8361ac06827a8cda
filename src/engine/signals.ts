// Internal control-flow signals of an executing run: thrown through user code, never shown to users.

/** Internal signal: this execution stopped (suspended, cancelled, evicted). Never reaches users. */
export class Abandoned extends Error {
  constructor() {
    // No stack: nobody reads it, and a run that ends makes one (capturing a stack costs microseconds).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super("Waymark internal: this run stopped executing in this process.");
    Error.stackTraceLimit = limit;
    this.name = "Abandoned";
  }
}

/** Internal signal: the scope (branch) this code runs in was cancelled. */
export class ScopeCancelled extends Error {
  constructor(path: string) {
    super(`Waymark internal: scope "${path}" was cancelled.`);
    this.name = "ScopeCancelled";
  }
}

export function isInternal(err: unknown): boolean {
  return err instanceof Abandoned || err instanceof ScopeCancelled;
}
