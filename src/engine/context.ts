// Builds the `ctx` a workflow's code receives for one scope; every primitive lives in its own file.

import { InvalidInputError, InvalidNameError } from "../errors.js";
import type { AnyWorkflow, LoopOptions, StepContext, StepOptions, WorkflowContext } from "../workflow.js";
import { runJoin, runLoop, runRace } from "./branches.js";
import { type ChildOptions, runChild } from "./child.js";
import type { Duration } from "./duration.js";
import { detailOf, setDetail } from "./entries.js";
import type { RunExecution } from "./execution.js";
import { called } from "./handled.js";
import { nameProblem, type Scope } from "./history.js";
import { describe } from "./query-input.js";
import { runQueueBatch, runQueueNext } from "./queue-waits.js";
import { readOnlyState } from "./read-only-state.js";
import { runStep } from "./step.js";
import { runSleep } from "./waits.js";

/** ctx.removed: skips an entry that older histories hold and the code no longer runs. */
async function runRemoved(exec: RunExecution, scope: Scope, name: string): Promise<void> {
  exec.check(scope);
  const problem = nameProblem(name);
  if (problem) throw new InvalidNameError("removed entry", name, problem);
  // Not a call that replays its entry: the name joins the set (ctx.removed never refuses a duplicate).
  scope.useName(name, -1);
  const recorded = scope.entry(scope.next);
  if (recorded && recorded.name === name && scope.next < scope.loaded) {
    scope.next++;
    exec.verifier?.progressed();
  }
}

/** ctx.version: the version pinned in history at this point, or `latest` recorded now. */
async function runVersion(exec: RunExecution, scope: Scope, name: string, latest: number): Promise<number> {
  exec.check(scope);
  if (!Number.isInteger(latest) || latest < 1) {
    throw new InvalidInputError(
      `ctx.version("${name}", latest): latest must be a positive whole number, got ${describe(latest)}.`,
    );
  }
  const recorded = scope.entry(scope.next);
  if (recorded && scope.next < scope.loaded && !(recorded.kind === "version" && recorded.name === name)) {
    // This run passed this point before the patch existed: it keeps the original behaviour.
    return 1;
  }
  const { ordinal, recorded: mine } = exec.slot(scope, name, "version");
  if (mine) return detailOf(mine)?.version ?? 1;
  const row = exec.newEntry(scope, ordinal, name, "version", "completed");
  row.endedAt = row.startedAt;
  setDetail(row, { version: latest });
  await exec.commitEntry(row);
  return latest;
}

/** ctx.rollbackCheckpoint: arms rollback handlers in this scope (and below) from here on; recorded once. */
async function runCheckpoint(exec: RunExecution, scope: Scope, name: string): Promise<void> {
  const { ordinal, recorded } = exec.slot(scope, name, "checkpoint");
  if (!recorded) {
    if (exec.holding) return exec.frontier();
    const row = exec.newEntry(scope, ordinal, name, "checkpoint", "completed");
    row.endedAt = row.startedAt;
    await exec.commitEntry(row);
  }
  scope.checkpoint = true;
}

type Ctx = WorkflowContext;

/** ctx.step of one scope. */
function stepOf(exec: RunExecution, scope: Scope): Ctx["step"] {
  return <T>(name: string, fn: (step: StepContext) => Promise<T> | T, options?: StepOptions) =>
    // Marks what it returns itself (see runStep): a replayed step's promise is fulfilled already.
    runStep(exec, scope, name, fn, options);
}

/** ctx.rollbackCheckpoint of one scope. */
function rollbackCheckpointOf(exec: RunExecution, scope: Scope): Ctx["rollbackCheckpoint"] {
  return (name: string) => called(runCheckpoint(exec, scope, name));
}

/** ctx.sleep of one scope. */
function sleepOf(exec: RunExecution, scope: Scope): Ctx["sleep"] {
  return (name: string, duration: Duration) => called(runSleep(exec, scope, name, { duration }));
}

/** ctx.sleepUntil of one scope. */
function sleepUntilOf(exec: RunExecution, scope: Scope): Ctx["sleepUntil"] {
  return (name: string, at: Date | number) => called(runSleep(exec, scope, name, { until: at }));
}

/** ctx.queue of one scope. */
function queueOf(exec: RunExecution, scope: Scope): Ctx["queue"] {
  return {
    next(name: string, options: { queue: string | readonly string[]; timeout?: Duration }) {
      return called(runQueueNext(exec, scope, name, options)) as Promise<never>;
    },
    nextBatch(name: string, options: { queue: string; count: number; timeout?: Duration }) {
      return called(runQueueBatch(exec, scope, name, options)) as Promise<never>;
    },
  };
}

/** ctx.join of one scope. */
function joinOf(exec: RunExecution, scope: Scope): Ctx["join"] {
  return (name, branches) => called(runJoin(exec, scope, name, branches)) as Promise<never>;
}

/** ctx.race of one scope. */
function raceOf(exec: RunExecution, scope: Scope): Ctx["race"] {
  return (name, branches) => called(runRace(exec, scope, name, branches)) as Promise<never>;
}

/** ctx.loop of one scope. */
function loopOf(exec: RunExecution, scope: Scope): Ctx["loop"] {
  return <LS, T>(name: string, options: LoopOptions<any, any, LS, T>) =>
    called(runLoop(exec, scope, name, options)) as Promise<T>;
}

/** ctx.broadcast of one scope. */
function broadcastOf(exec: RunExecution, scope: Scope): Ctx["broadcast"] {
  return (event: string, data?: unknown) => {
    if (!scope.replaying && !exec.dead && !exec.verifying) exec.core.emitBroadcast(exec, event, data);
  };
}

/** ctx.removed of one scope. */
function removedOf(exec: RunExecution, scope: Scope): Ctx["removed"] {
  return (name: string) => called(runRemoved(exec, scope, name));
}

/** ctx.version of one scope. */
function versionOf(exec: RunExecution, scope: Scope): Ctx["version"] {
  return (name: string, latest: number) => called(runVersion(exec, scope, name, latest));
}

/** ctx.child of one scope. */
function childOf(exec: RunExecution, scope: Scope): Ctx["child"] {
  return (name: string, workflow: string | AnyWorkflow, options: ChildOptions<any>) =>
    called(runChild(exec, scope, name, workflow, options)) as Promise<never>;
}

/**
 * The `ctx` of one scope. Its methods are prototype getters that bind on first read, so `ctx.step(...)` and
 * `const { step, sleep } = ctx` both work, while a run that calls two of them makes two closures, not fifteen
 * (an object literal with getters and fifteen closures was about 2 KB a run).
 */
class Context {
  readonly key: string;
  readonly workflow: string;
  readonly workflowVersion: number;
  readonly #exec: RunExecution;
  readonly #scope: Scope;
  #step: Ctx["step"] | undefined = undefined;
  #rollbackCheckpoint: Ctx["rollbackCheckpoint"] | undefined = undefined;
  #sleep: Ctx["sleep"] | undefined = undefined;
  #sleepUntil: Ctx["sleepUntil"] | undefined = undefined;
  #queue: Ctx["queue"] | undefined = undefined;
  #join: Ctx["join"] | undefined = undefined;
  #race: Ctx["race"] | undefined = undefined;
  #loop: Ctx["loop"] | undefined = undefined;
  #broadcast: Ctx["broadcast"] | undefined = undefined;
  #removed: Ctx["removed"] | undefined = undefined;
  #version: Ctx["version"] | undefined = undefined;
  #child: Ctx["child"] | undefined = undefined;

  constructor(exec: RunExecution, scope: Scope) {
    this.#exec = exec;
    this.#scope = scope;
    this.key = exec.key;
    this.workflow = exec.workflow;
    this.workflowVersion = exec.version;
  }

  get state() {
    return readOnlyState(this.#exec.state, this.#exec.label);
  }

  get signal() {
    return this.#scope.signal;
  }

  get step(): Ctx["step"] {
    return (this.#step ??= stepOf(this.#exec, this.#scope));
  }

  get rollbackCheckpoint(): Ctx["rollbackCheckpoint"] {
    return (this.#rollbackCheckpoint ??= rollbackCheckpointOf(this.#exec, this.#scope));
  }

  get sleep(): Ctx["sleep"] {
    return (this.#sleep ??= sleepOf(this.#exec, this.#scope));
  }

  get sleepUntil(): Ctx["sleepUntil"] {
    return (this.#sleepUntil ??= sleepUntilOf(this.#exec, this.#scope));
  }

  get queue(): Ctx["queue"] {
    return (this.#queue ??= queueOf(this.#exec, this.#scope));
  }

  get join(): Ctx["join"] {
    return (this.#join ??= joinOf(this.#exec, this.#scope));
  }

  get race(): Ctx["race"] {
    return (this.#race ??= raceOf(this.#exec, this.#scope));
  }

  get loop(): Ctx["loop"] {
    return (this.#loop ??= loopOf(this.#exec, this.#scope));
  }

  get broadcast(): Ctx["broadcast"] {
    return (this.#broadcast ??= broadcastOf(this.#exec, this.#scope));
  }

  get removed(): Ctx["removed"] {
    return (this.#removed ??= removedOf(this.#exec, this.#scope));
  }

  get version(): Ctx["version"] {
    return (this.#version ??= versionOf(this.#exec, this.#scope));
  }

  get child(): Ctx["child"] {
    return (this.#child ??= childOf(this.#exec, this.#scope));
  }
}

export function makeContext(exec: RunExecution, scope: Scope): WorkflowContext {
  return new Context(exec, scope) as unknown as WorkflowContext;
}
