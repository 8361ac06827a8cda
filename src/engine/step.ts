// ctx.step: run a function once, record every attempt, retry with backoff, commit state with the record.

import { FatalError, InvalidInputError, InvalidTagError, StepFailedError, TagLimitError } from "../errors.js";
import { ATTR, type EntrySpan } from "../observability/tracing.js";
import { RollbackNotArmedError } from "../rollback-errors.js";
import type { StepContext, StepOptions } from "../workflow.js";
import { toMs } from "./duration.js";
import {
  type Attempt,
  attemptsGoingOn,
  attemptsOf,
  type EntryOf,
  entryPath,
  storedAttempts,
} from "./entries.js";
import { type ErrorInfo, errorInfo } from "./error-info.js";
import type { RunExecution } from "./execution.js";
import { called, rejected } from "./handled.js";
import { NOT_REPLAYED, type Scope } from "./history.js";
import { applyDiff, diffState, fromJson, type JsonValue, type StateDiff, toJson, valueAt } from "./json.js";
import { describe } from "./query-input.js";
import { Abandoned, isInternal } from "./signals.js";
import { AttemptContext, attemptThrew, callStep, isFatal, isThenable, timedAttempt } from "./step-attempt.js";
import { commitStepTags, loadRunTags } from "./step-tags.js";

const DEFAULT_RETRIES = 3;

export interface RetryPolicy {
  maxAttempts: number;
  initial: number;
  max: number;
  factor: number;
  jitter: boolean;
  timeout: number | null;
}

const DEFAULT_POLICY: RetryPolicy = {
  maxAttempts: DEFAULT_RETRIES + 1,
  initial: 250,
  max: 60_000,
  factor: 2,
  jitter: true,
  timeout: null,
};

/** A step's retry policy from its options (a rollback handler retries by its step's policy too). */
export function policyOf(options: StepOptions | undefined, path: string): RetryPolicy {
  if (options === undefined) return DEFAULT_POLICY;
  const retries = options?.retries ?? DEFAULT_RETRIES;
  if (!Number.isInteger(retries) || retries < 0) {
    throw new InvalidInputError(
      `Step "${path}": retries must be a whole number of 0 or more, got ${describe(retries)}.`,
    );
  }
  const b = options?.backoff;
  const spec = typeof b === "object" && b !== null ? b : { initial: b };
  if (
    spec.factor !== undefined &&
    !(typeof spec.factor === "number" && spec.factor >= 1 && spec.factor <= 100)
  ) {
    throw new InvalidInputError(
      `Step "${path}": backoff factor must be a number from 1 (a fixed delay) to 100, got ${describe(spec.factor)}.`,
    );
  }
  return {
    maxAttempts: retries + 1,
    initial: spec.initial === undefined ? 250 : toMs(spec.initial, `backoff of step "${path}"`),
    max: spec.max === undefined ? 60_000 : toMs(spec.max, `backoff max of step "${path}"`),
    factor: spec.factor ?? 2,
    jitter: spec.jitter ?? true,
    timeout: options?.timeout === undefined ? null : toMs(options.timeout, `timeout of step "${path}"`),
  };
}

/** Delay before attempt n+1 after attempt n failed: exponential, capped, with full jitter in [50%, 100%]. */
export function backoffDelay(
  policy: Pick<RetryPolicy, "initial" | "max" | "factor" | "jitter">,
  n: number,
  random: number,
): number {
  const base = Math.min(policy.max, policy.initial * policy.factor ** (n - 1));
  return Math.round(policy.jitter ? base * (0.5 + random / 2) : base);
}

/**
 * Applies the paths a step changed to the run's committed state; returns the change as
 * recorded (values before are the committed ones, so reverting changes newest first is exact).
 */
function mergeIntoState(exec: RunExecution, changed: StateDiff): StateDiff {
  const committed = exec.state as Record<string, JsonValue>;
  const diff: StateDiff = {};
  for (const [pointer, change] of Object.entries(changed)) {
    const next: { before?: JsonValue; after?: JsonValue } = {};
    const current = valueAt(committed, pointer);
    if (current !== undefined) next.before = current;
    if ("after" in change) next.after = change.after!;
    diff[pointer] = next;
  }
  applyDiff(committed, diff);
  exec.stateJson = JSON.stringify(committed);
  return diff;
}

/** Rebuilds the error a recorded failed step throws on replay. */
function recordedFailure(exec: RunExecution, row: EntryOf<"step">): StepFailedError {
  const info = fromJson<ErrorInfo>(row.error) ?? { name: "Error", message: "unknown" };
  const attempts = attemptsOf(row).length;
  const cause = (info.details?.cause as ErrorInfo | undefined) ?? info;
  return new StepFailedError(
    exec.label,
    entryPath(row.scope, row.name),
    attempts,
    cause,
    info.details?.fatal === true,
  );
}

/**
 * ctx.step. A recorded completed step (most of a replay) resolves here without an async frame of its own,
 * as a fulfilled promise with no handler added (see called: one per replayed step was a promise, a reaction
 * and a microtask more); everything else goes on in liveStep. A throw comes back as a rejected promise; any
 * promise that may reject is marked handled.
 */
export function runStep<T>(
  exec: RunExecution,
  scope: Scope,
  name: string,
  fn: (step: StepContext) => Promise<T> | T,
  options: StepOptions | undefined,
): Promise<T> {
  let slot: { ordinal: number; recorded: EntryOf<"step"> | undefined };
  try {
    // Most of a long replay: the step recorded completed here under this name, without a rollback handler.
    if (options?.rollback === undefined && typeof fn === "function") {
      const output = exec.replayedStep(scope, name);
      if (output !== NOT_REPLAYED)
        return Promise.resolve((output === null ? undefined : JSON.parse(output)) as T);
    }
    slot = claimStep(exec, scope, name, fn, options);
    const recorded = slot.recorded;
    if (recorded?.status === "completed") {
      if (options?.rollback) exec.rollbacks.replayed(recorded, options.rollback, options);
      return Promise.resolve((recorded.output === null ? undefined : JSON.parse(recorded.output)) as T);
    }
  } catch (err) {
    return rejected(err);
  }
  // liveStep marks its promises itself, only where they may reject: a recorded live step adds no handler.
  return liveStep(exec, scope, name, fn, options, slot.ordinal, slot.recorded);
}

/** A step call's checks, then its place in history (and what is recorded there). */
function claimStep<T>(
  exec: RunExecution,
  scope: Scope,
  name: string,
  fn: (step: StepContext) => Promise<T> | T,
  options: StepOptions | undefined,
): { ordinal: number; recorded: EntryOf<"step"> | undefined } {
  if (typeof fn !== "function") {
    throw new InvalidInputError(`ctx.step("${name}", fn) needs a function as its second argument.`);
  }
  const undo = options?.rollback;
  if (undo !== undefined) {
    exec.check(scope);
    if (typeof undo !== "function")
      throw new InvalidInputError(
        `Step "${entryPath(scope.path, name)}": rollback must be a function (rb, output) => ..., got ${typeof undo}.`,
      );
    if (!scope.armed) throw new RollbackNotArmedError(exec.label, entryPath(scope.path, name));
  }
  return exec.slot(scope, name, "step");
}

/** A new step's attempts before its first (never written to: the first attempt replaces it). */
const NO_ATTEMPTS: Attempt[] = Object.freeze([]) as unknown as Attempt[];

/** A step not recorded completed: a recorded failure thrown again, or attempts run (and recorded). */
function liveStep<T>(
  exec: RunExecution,
  scope: Scope,
  name: string,
  fn: (step: StepContext) => Promise<T> | T,
  options: StepOptions | undefined,
  ordinal: number,
  recorded: EntryOf<"step"> | undefined,
): Promise<T> {
  if (recorded?.status === "failed") return rejected(recordedFailure(exec, recorded));
  if (exec.holding) return exec.frontier();
  let step: LiveStep<T>;
  try {
    step = new LiveStep(exec, scope, name, fn, options, ordinal, recorded);
  } catch (err) {
    return rejected(err);
  }
  return step.attempt();
}

/**
 * The attempts of one step call. A class with then() chains rather than one async function: a step whose
 * function returns a value runs its attempt and records it without an async frame (the frame, kept alive until
 * the record committed, was a quarter of what a step allocated); awaits remain for promises, tags, retries.
 */
class LiveStep<T> {
  private readonly path: string;
  private readonly policy: RetryPolicy;
  private readonly row: EntryOf<"step">;
  private attempts: Attempt[];

  constructor(
    private readonly exec: RunExecution,
    private readonly scope: Scope,
    private readonly name: string,
    private readonly fn: (step: StepContext) => Promise<T> | T,
    private readonly options: StepOptions | undefined,
    ordinal: number,
    recorded: EntryOf<"step"> | undefined,
  ) {
    const path = entryPath(scope.path, name);
    this.path = path;
    this.policy = policyOf(options, path);
    const row = recorded ?? exec.newEntry(scope, ordinal, name, "step", "running");
    if (!recorded && options?.input !== undefined)
      row.input = toJson(options.input, `The input of step "${path}"`);
    this.row = row;
    this.attempts = recorded ? attemptsGoingOn(row) : NO_ATTEMPTS;
  }

  /** The next attempt (after its backoff when the last one failed); resolves with the recorded value. */
  attempt(): Promise<T> {
    try {
      return this.row.status === "retrying" ? called(this.afterBackoff()) : this.begin();
    } catch (err) {
      return rejected(err);
    }
  }

  private async afterBackoff(): Promise<T> {
    const { exec, scope } = this;
    const clock = exec.core.clock;
    const at = this.attempts.at(-1)?.retryAt ?? 0;
    if (at > clock.now()) await exec.wait({ kind: "retry", deadline: at, scope, path: this.path });
    exec.check(scope);
    if (at > 0) exec.core.metrics.late("retry", (clock.now() - at) / 1000);
    return this.begin();
  }

  /** Starts an attempt and calls the function; a value (not a promise) is recorded without a turn of its own. */
  private begin(): Promise<T> {
    const { exec, row, path } = this;
    const n = this.attempts.length + 1;
    // endedAt from the start (JSON leaves it out while undefined): setting it later grew the object.
    const attempt: Attempt = { n, startedAt: exec.core.clock.now(), status: "running", endedAt: undefined };
    // A first attempt's list holds just it (a push onto [] reserved room for 17).
    if (n === 1) this.attempts = [attempt];
    else this.attempts.push(attempt);
    // A new entry starts with its first attempt (so a plain completed step needs no attempts of its own).
    if (attempt.n === 1) row.startedAt = attempt.startedAt;
    const span = exec.trace?.attempt(path, attempt.n, attempt.startedAt) ?? null;
    row.status = "running";

    exec.active++;
    // Each attempt works on its own copy of the state: a failed attempt's writes vanish with it, and
    // steps running side by side (join branches) never see or commit each other's unfinished writes.
    // The copy is made when the step first touches `step.state`; a step that never does changes nothing.
    const work = new AttemptContext(exec, this.scope, exec.stateJson, attempt.n, this.name);
    let out: Promise<T> | T;
    let later: boolean;
    try {
      out =
        this.policy.timeout === null
          ? callStep(exec, path, this.fn, work, span)
          : timedAttempt(exec, path, this.fn, work, span, this.policy.timeout, attempt.n);
      // Inside the try: a value whose `then` getter throws is a failed attempt, as when it was awaited.
      later = isThenable(out) || work.tags !== null;
    } catch (err) {
      work.release();
      this.mark();
      return called(this.failed(attempt, span, err));
    }
    if (later) {
      this.mark();
      return called(this.settled(out, attempt, span, work));
    }
    work.release();
    let value: T;
    try {
      value = this.completed(out as T, attempt, span, work); // not a thenable: `later` is false
    } catch (err) {
      this.mark();
      return called(this.failed(attempt, span, err));
    }
    // Recorded within the call: the start marker it would have queued is superseded already, so none is.
    return exec.commitStep(row, value);
  }

  /**
   * Queues the attempt's start marker, once its function did not complete within the call (it returned a
   * promise, set tags or threw). The attempts are serialised only if the marker is written (a turn later).
   */
  private mark(): void {
    this.exec.mark(this.row, this.attempts);
  }

  /** An attempt whose function returned a promise (or that set tags): awaited, then recorded. */
  private async settled(
    out: PromiseLike<T> | T,
    attempt: Attempt,
    span: EntrySpan | null,
    work: AttemptContext,
  ): Promise<T> {
    let value: T;
    try {
      try {
        value = isThenable(out) ? await out : out;
      } finally {
        work.release();
      }
      if (work.tags) await loadRunTags(this.exec);
      value = this.completed(value, attempt, span, work);
    } catch (err) {
      return this.failed(attempt, span, err);
    }
    return this.exec.commitStep(this.row, value);
  }

  /** Records a returned value on the entry (output, state change, tags); returns the value as recorded. */
  private completed(value: T, attempt: Attempt, span: EntrySpan | null, work: AttemptContext): T {
    const { exec, row, path } = this;
    // The function may return after its run or branch stopped (it ignored step.signal): then nothing
    // it did is recorded. Every write of a completed step comes after this line.
    exec.assertLive(this.scope);
    const output = value === undefined ? null : toJson(value, `The result of step "${path}"`);
    const recorded = asRecorded(value, output);
    let diff: StateDiff | null = null;
    if (work.value !== undefined) {
      if (typeof work.value !== "object" || work.value === null || Array.isArray(work.value)) {
        throw new FatalError(
          `Step "${path}" replaced the run's state with ${Array.isArray(work.value) ? "an array" : String(work.value)}; state must stay an object. Change its properties instead.`,
        );
      }
      const changed = diffState(work.base, toJson(work.value, `The state after step "${path}"`));
      diff = changed ? mergeIntoState(exec, changed) : null;
    }
    if (work.tags) commitStepTags(exec, row, work.tags, path);
    attempt.status = "completed";
    attempt.endedAt = exec.core.clock.now();
    row.status = "completed";
    row.endedAt = attempt.endedAt;
    row.output = output;
    row.attempts = storedAttempts(row, this.attempts);
    const undo = this.options?.rollback;
    if (undo) exec.rollbacks.completed(row, undo, this.options);
    attemptEnded(exec, span, attempt, true);
    if (diff) {
      row.stateSeq = ++exec.stateSeq;
      row.stateDiff = JSON.stringify(diff);
      exec.writeState();
    }
    return recorded;
  }

  /** An attempt that threw: recorded, then retried after its backoff, or the step fails. */
  private async failed(attempt: Attempt, span: EntrySpan | null, err: unknown): Promise<T> {
    const { exec, row, policy } = this;
    const clock = exec.core.clock;
    exec.active--;
    if (exec.dead || isInternal(err)) {
      span?.end(clock.now(), { [ATTR.attemptStatus]: "abandoned" });
      throw err instanceof Abandoned ? err : new Abandoned();
    }
    if (this.scope.cancelled) {
      span?.end(clock.now(), { [ATTR.attemptStatus]: "cancelled" });
      throw err;
    }
    const endedAt = clock.now();
    const info = attemptThrew(attempt, err, endedAt);
    const fatal = isFatal(err) || err instanceof TagLimitError || err instanceof InvalidTagError;
    attemptEnded(exec, span, attempt, fatal || attempt.n >= policy.maxAttempts, err);
    if (fatal || attempt.n >= policy.maxAttempts) {
      const failure = new StepFailedError(exec.label, this.path, attempt.n, info, fatal);
      row.status = "failed";
      row.endedAt = endedAt;
      row.error = JSON.stringify({ ...errorInfo(failure), details: { ...failure.details, cause: info } });
      row.attempts = JSON.stringify(this.attempts);
      await exec.commitEntry(row);
      failure.cause = err;
      throw failure;
    }
    attempt.retryAt = endedAt + backoffDelay(policy, attempt.n, exec.core.random());
    row.status = "retrying";
    row.attempts = JSON.stringify(this.attempts);
    await exec.commitEntry(row);
    return this.attempt();
  }
}

/**
 * What the workflow gets back from a step it ran: the value as its record reads back, so a replay hands the
 * code the same (not the object the function returned, which code after the step could change, with its
 * undefined properties and a -0 that JSON does not keep).
 */
function asRecorded<T>(value: T, output: string | null): T {
  if (output === null) return undefined as T;
  if (typeof value === "object" && value !== null) return JSON.parse(output) as T;
  return (Object.is(value, -0) ? 0 : value) as T;
}

/** Ends an attempt's span (its status as recorded, the error as an exception event) and counts it. */
function attemptEnded(
  exec: RunExecution,
  span: EntrySpan | null,
  attempt: Attempt,
  final: boolean,
  error?: unknown,
): void {
  const endedAt = attempt.endedAt ?? exec.core.clock.now();
  span?.end(endedAt, { [ATTR.attemptStatus]: attempt.status, [ATTR.willRetry]: !final }, error);
  exec.core.metrics.attempt(exec.workflow, error === undefined, (endedAt - attempt.startedAt) / 1000, final);
}
