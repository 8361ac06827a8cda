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

const EXEC = Symbol("exec");
const SCOPE = Symbol("scope");
const MADE = Symbol("made");

type Method = Exclude<keyof Ctx, "key" | "workflow" | "workflowVersion" | "state" | "signal">;

/** How each method of one scope is made (on its first read). */
const MAKERS: Record<Method, (exec: RunExecution, scope: Scope) => unknown> = {
  step: stepOf,
  rollbackCheckpoint: rollbackCheckpointOf,
  sleep: sleepOf,
  sleepUntil: sleepUntilOf,
  queue: queueOf,
  join: joinOf,
  race: raceOf,
  loop: loopOf,
  broadcast: broadcastOf,
  removed: removedOf,
  version: versionOf,
  child: childOf,
};

/**
 * ctx's own accessors, shared by every ctx: `state` and `signal` read the execution, each method is made for
 * its scope on its first read and kept (or replaced by assignment). Own and enumerable, so `{ ...ctx, log }`,
 * `Object.keys(ctx)`, a Proxy and `const { step, sleep } = ctx` work as on a plain object, while a run that
 * calls two methods makes two closures (an object literal of getters and methods made fifteen, ~2 KB a run).
 */
const ACCESSORS: PropertyDescriptorMap = {
  state: {
    enumerable: true,
    configurable: true,
    get(this: Context) {
      return readOnlyState(this[EXEC].state, this[EXEC].label);
    },
  },
  signal: {
    enumerable: true,
    configurable: true,
    get(this: Context) {
      return this[SCOPE].signal;
    },
  },
};
for (const [name, make] of Object.entries(MAKERS)) {
  ACCESSORS[name] = {
    enumerable: true,
    configurable: true,
    get(this: Context) {
      return (this[MADE][name as Method] ??= make(this[EXEC], this[SCOPE]));
    },
    // Assigned (a wrapper around ctx.step), it becomes a plain property of the object assigned to, as on a
    // plain object: an object made with Object.create(ctx) shadows the method and ctx keeps its own.
    set(this: object, value: unknown) {
      Object.defineProperty(this, name, { value, writable: true, enumerable: true, configurable: true });
    },
  };
}

/** The `ctx` of one scope (see ACCESSORS); what its accessors read is under symbols, out of user code's way. */
class Context {
  declare readonly [EXEC]: RunExecution;
  declare readonly [SCOPE]: Scope;
  declare readonly [MADE]: Partial<Record<Method, unknown>>;
  readonly key: string;
  readonly workflow: string;
  readonly workflowVersion: number;

  constructor(exec: RunExecution, scope: Scope) {
    Object.defineProperty(this, EXEC, { value: exec });
    Object.defineProperty(this, SCOPE, { value: scope });
    Object.defineProperty(this, MADE, { value: {} });
    this.key = exec.key;
    this.workflow = exec.workflow;
    this.workflowVersion = exec.version;
    Object.defineProperties(this, ACCESSORS);
  }
}

export function makeContext(exec: RunExecution, scope: Scope): WorkflowContext {
  return new Context(exec, scope) as unknown as WorkflowContext;
}
