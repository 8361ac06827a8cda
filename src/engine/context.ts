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

export function makeContext(exec: RunExecution, scope: Scope): WorkflowContext {
  const ctx: WorkflowContext = {
    get state() {
      return readOnlyState(exec.state, exec.label);
    },
    key: exec.key,
    workflow: exec.workflow,
    workflowVersion: exec.version,
    get signal() {
      return scope.signal;
    },
    step<T>(name: string, fn: (step: StepContext) => Promise<T> | T, options?: StepOptions) {
      // Marks what it returns itself (see runStep): a replayed step's promise is fulfilled already.
      return runStep(exec, scope, name, fn, options);
    },
    rollbackCheckpoint(name: string) {
      return called(runCheckpoint(exec, scope, name));
    },
    sleep(name: string, duration: Duration) {
      return called(runSleep(exec, scope, name, { duration }));
    },
    sleepUntil(name: string, at: Date | number) {
      return called(runSleep(exec, scope, name, { until: at }));
    },
    queue: {
      next(name: string, options: { queue: string | readonly string[]; timeout?: Duration }) {
        return called(runQueueNext(exec, scope, name, options)) as Promise<never>;
      },
      nextBatch(name: string, options: { queue: string; count: number; timeout?: Duration }) {
        return called(runQueueBatch(exec, scope, name, options)) as Promise<never>;
      },
    },
    join(name, branches) {
      return called(runJoin(exec, scope, name, branches)) as Promise<never>;
    },
    race(name, branches) {
      return called(runRace(exec, scope, name, branches)) as Promise<never>;
    },
    loop<LS, T>(name: string, options: LoopOptions<any, any, LS, T>) {
      return called(runLoop(exec, scope, name, options)) as Promise<T>;
    },
    broadcast(event: string, data?: unknown) {
      if (!scope.replaying && !exec.dead && !exec.verifying) exec.core.emitBroadcast(exec, event, data);
    },
    removed(name: string) {
      return called(runRemoved(exec, scope, name));
    },
    version(name: string, latest: number) {
      return called(runVersion(exec, scope, name, latest));
    },
    child(name: string, workflow: string | AnyWorkflow, options: ChildOptions<any>) {
      return called(runChild(exec, scope, name, workflow, options)) as Promise<never>;
    },
  };
  return ctx;
}
