// One attempt of a step: the context its function receives (with its private copy of the run's state) and
// how the function is called (marked as running a step; raced against its timeout when it has one).

import { FatalError, NotSerializableError, StepTimeoutError, ValueTooDeepError } from "../errors.js";
import type { EntrySpan } from "../observability/tracing.js";
import type { StepContext } from "../workflow.js";
import { type Attempt, entryPath } from "./entries.js";
import { type ErrorInfo, errorInfo } from "./error-info.js";
import type { RunExecution } from "./execution.js";
import type { Scope } from "./history.js";
import { Abandoned } from "./signals.js";
import { tagAttempt } from "./step-tags.js";
import type { Tags } from "./tags.js";

/**
 * The context one attempt's function receives, and the attempt's private copy of the run's state, made on
 * first use (a class: one allocation, accessors on the prototype).
 */
export class AttemptContext implements StepContext {
  private controller: AbortController | null = null;
  /** The state as this attempt set or changed it (undefined until `step.state` is touched). */
  value: object | undefined = undefined;
  /** What step.tag set in this attempt (null until it is called). */
  tags: Tags | null = null;
  constructor(
    private readonly exec: RunExecution,
    private readonly scope: Scope,
    /** The run's state as committed when the attempt began (JSON). */
    readonly base: string,
    readonly attempt: number,
    readonly name: string,
  ) {}
  get state(): any {
    if (this.value === undefined) this.value = JSON.parse(this.base) as object;
    return this.value;
  }
  set state(value: any) {
    this.value = value;
  }
  get key(): string {
    return this.exec.key;
  }
  get workflow(): string {
    return this.exec.workflow;
  }
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      this.exec.controllers.add(this.controller);
      if (this.scope.cancelled || this.exec.dead) this.controller.abort(new Abandoned());
    }
    return this.controller.signal;
  }
  tag(name: string, value: string): void {
    // A step still running after its run or branch stopped records nothing.
    if (this.exec.dead || this.scope.cancelled) return;
    this.tags ??= {};
    tagAttempt(this.tags, name, value, entryPath(this.scope.path, this.name));
  }
  broadcast(event: string, data?: unknown): void {
    // A step still running after its run or branch stopped tells nobody anything.
    if (this.exec.dead || this.scope.cancelled) return;
    this.exec.core.emitBroadcast(this.exec, event, data);
  }
  /** Fires the signal (timeout). */
  abort(reason: unknown): void {
    void this.signal;
    this.controller!.abort(reason);
  }
  release(): void {
    if (this.controller) this.exec.controllers.delete(this.controller);
  }
}

/**
 * Calls a step's function, marking the run while its synchronous part runs, so that `ctx.step(...)`
 * written inside a step (a closure over ctx) is refused at once instead of recording stray entries.
 */
export function callStep<T>(
  exec: RunExecution,
  path: string,
  fn: (step: StepContext) => Promise<T> | T,
  step: StepContext,
  span: EntrySpan | null,
): Promise<T> | T {
  exec.callingStep = path;
  try {
    // The attempt's span is the active context inside the function: what the application traces nests under it.
    return span ? span.run(() => fn(step)) : fn(step);
  } finally {
    exec.callingStep = null;
  }
}

/** A thenable (a promise, or any object with a then method, as await treats it). */
export function isThenable<T>(value: T | PromiseLike<T>): value is PromiseLike<T> {
  return (
    (typeof value === "object" || typeof value === "function") &&
    value !== null &&
    typeof (value as { then?: unknown }).then === "function"
  );
}

/**
 * Races `work` against `timeout` ms: past it, `abort` is told the StepTimeoutError (to fire the signal the
 * function was given) and the race rejects with it. The timer is cleared either way.
 */
export async function raceTimeout<T>(
  work: Promise<T>,
  timeout: number,
  path: string,
  attempt: number,
  abort: (err: StepTimeoutError) => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          const err = new StepTimeoutError(path, timeout, attempt);
          abort(err);
          reject(err);
        }, timeout);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** Calls a step's function racing its timeout: the signal fires and the attempt fails with StepTimeoutError. */
export function timedAttempt<T>(
  exec: RunExecution,
  path: string,
  fn: (step: StepContext) => Promise<T> | T,
  step: AttemptContext,
  span: EntrySpan | null,
  timeout: number,
  attempt: number,
): Promise<T> {
  const work = Promise.resolve().then(() => callStep(exec, path, fn, step, span));
  return raceTimeout(work, timeout, path, attempt, (err) => step.abort(err));
}

/** Records on an attempt that threw how it ended (timed out or failed), when, and the error; returns its info. */
export function attemptThrew(attempt: Attempt, err: unknown, now: number): ErrorInfo {
  const info = errorInfo(err);
  attempt.status = err instanceof StepTimeoutError ? "timed-out" : "failed";
  attempt.endedAt = now;
  attempt.error = info;
  return info;
}

/** An error no retry can mend (a FatalError, a value that cannot be stored): the attempt's call fails at once. */
export function isFatal(err: unknown): boolean {
  return err instanceof FatalError || err instanceof NotSerializableError || err instanceof ValueTooDeepError;
}
