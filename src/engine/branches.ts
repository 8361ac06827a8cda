// ctx.join, ctx.race and ctx.loop: parallel branches and long-lived loops, each in scopes of their own.

import { BranchFailedError, InvalidInputError, InvalidNameError } from "../errors.js";
import type { LoopOptions, LoopResult, WorkflowContext } from "../workflow.js";
import {
  attemptsOf,
  childScopes,
  detailOf,
  type Entry,
  entryPath,
  isUnfinished,
  type LoopDetail,
  reopenedStatus,
  setDetail,
} from "./entries.js";
import { type ErrorInfo, errorInfo } from "./error-info.js";
import type { RunExecution } from "./execution.js";
import { nameProblem, type Scope } from "./history.js";
import { composeDiffs, fromJson, type StateDiff, toJson } from "./json.js";
import { isInternal } from "./signals.js";

type Branches = Record<string, (ctx: WorkflowContext) => Promise<unknown>>;

function branchNames(branches: Branches, what: string): string[] {
  if (typeof branches !== "object" || branches === null) {
    throw new InvalidInputError(`${what} needs an object of branches: { name: async (ctx) => ... }.`);
  }
  const names = Object.keys(branches);
  if (names.length === 0) throw new InvalidInputError(`${what} needs at least one branch.`);
  for (const n of names) {
    const problem = nameProblem(n);
    if (problem) throw new InvalidNameError("branch", n, problem);
    if (typeof branches[n] !== "function")
      throw new InvalidInputError(`${what}: branch "${n}" must be a function (ctx) => Promise.`);
  }
  return names;
}

function rethrowRecorded(exec: RunExecution, row: Entry): never {
  const info = fromJson<ErrorInfo>(row.error) ?? { name: "Error", message: "unknown" };
  const failed = (info.details?.failed as Array<{ branch: string; message: string }> | undefined) ?? [
    { branch: "?", message: info.message },
  ];
  throw new BranchFailedError(exec.label, entryPath(row.scope, row.name), failed);
}

/**
 * Records a join, race or loop as failed with the error that ended it (in the same commit as the
 * entries of the branches its failure cancelled), then rethrows it.
 */
async function failContainer(
  exec: RunExecution,
  row: Entry,
  err: unknown,
  cancelled: Entry[] = [],
): Promise<never> {
  // Verify mode (replay checks) writes nothing, and must not change the rows it reads either.
  if (isInternal(err) || exec.dead || exec.verifying) throw err;
  row.status = "failed";
  row.endedAt = exec.core.clock.now();
  row.error = JSON.stringify(errorInfo(err));
  await commitWith(exec, row, cancelled);
  throw err;
}

/** Commits a container's entry together with the (already written) entries it cancelled; emits them all. */
async function commitWith(exec: RunExecution, row: Entry, cancelled: Entry[]): Promise<void> {
  if (cancelled.length === 0) return exec.commitEntry(row);
  if (exec.verifying) return;
  exec.write(row);
  await exec.persist();
  for (const r of cancelled) exec.core.emitEntry(exec, r);
  exec.core.emitEntry(exec, row);
}

// ---- cancelled branches' entries ------------------------------------------------------------------
//
// A branch cancelled by its race (or by a failing sibling in a join) stops at its next call, and its
// waits are dropped without a record. So that history does not show them waiting forever, every entry
// still in progress in a cancelled branch (at any depth) is recorded as "cancelled" when the container
// settles, in the same commit as the container's own record. Should a replay reopen the container, those
// entries are put back in progress before its branches run again (see reopenCancelled).

/**
 * Visits every entry recorded in the scopes `paths` and the scopes nested in them (whether or not this
 * execution reached them yet), descending into a container only when `visit` returns true.
 */
function walkEntries(exec: RunExecution, paths: string[], visit: (row: Entry) => boolean): void {
  const todo = [...paths];
  for (let path = todo.pop(); path !== undefined; path = todo.pop()) {
    for (const row of exec.history.scope(path)) {
      if (row && visit(row)) todo.push(...childScopes(row));
    }
  }
}

/**
 * Records every entry still in progress in the cancelled scopes as cancelled, a running attempt with it
 * (queued writes, committed with the container's record, or before a cancelled run's own record);
 * returns them. A step whose function is already running cannot be stopped, only signalled: should it
 * still return, nothing of it is recorded (see runStep), so this record stands.
 */
export function cancelEntries(exec: RunExecution, scopes: Scope[]): Entry[] {
  if (exec.dead || exec.verifying || scopes.length === 0) return [];
  const now = exec.core.clock.now();
  const out: Entry[] = [];
  walkEntries(
    exec,
    scopes.map((s) => s.path),
    (row) => {
      if (isUnfinished(row.status)) {
        row.status = "cancelled";
        row.endedAt = now;
        // A step's attempt that began this turn is only in its pending start marker.
        const marked = row.kind === "step" ? exec.core.writes.markedAttempts(row) : undefined;
        if (row.kind === "step" && (marked || row.attempts)) {
          const attempts = marked ? marked.map((a) => ({ ...a })) : attemptsOf(row);
          const last = attempts.at(-1);
          if (last?.status === "running") {
            last.status = "cancelled";
            last.endedAt = now;
            row.attempts = JSON.stringify(attempts);
          }
        }
        exec.write(row);
        out.push(row);
      }
      return true;
    },
  );
  return out;
}

/**
 * A container running again (reopened by a replay) puts the entries its earlier outcome cancelled
 * back in progress; entries cancelled by a finished container nested in it stay as they are.
 */
function reopenCancelled(exec: RunExecution, paths: string[]): void {
  if (exec.dead || exec.verifying) return;
  walkEntries(exec, paths, (row) => {
    if (row.status === "cancelled") {
      row.status = reopenedStatus(row);
      row.endedAt = null;
      exec.write(row);
    }
    return isUnfinished(row.status);
  });
}

/** Adds array destructuring to a join result, in branch order. */
function withIterator(result: Record<string, unknown>, names: string[]): Record<string, unknown> {
  Object.defineProperty(result, Symbol.iterator, {
    enumerable: false,
    value: function* () {
      for (const n of names) yield result[n];
    },
  });
  return result;
}

/** Starts every branch in its own scope; settles per `mode`, cancelling the rest. */
function runBranches(
  exec: RunExecution,
  parent: Scope,
  path: string,
  branches: Branches,
  names: string[],
  mode: "all" | "first",
  /** Filled with the scopes cancelled when the outcome is decided. */
  cancelled: Scope[],
): Promise<{ values: Record<string, unknown>; winner?: string }> {
  const scopes = names.map((n) => exec.openScope(`${path}[${n}]`, parent));
  return new Promise((resolve, reject) => {
    const values: Record<string, unknown> = {};
    const failures: Array<{ branch: string; message: string }> = [];
    let pending = names.length;
    let settled = false;
    const cancelOthers = (except: number) => {
      scopes.forEach((s, i) => {
        if (i !== except) {
          cancelled.push(s);
          s.cancel(new Error(`branch cancelled`));
          exec.dropWaits(s);
        }
      });
    };
    names.forEach((n, i) => {
      const ctx = exec.contextFor(scopes[i]!);
      Promise.resolve()
        .then(() => branches[n]!(ctx))
        .then(
          (value) => {
            exec.verifier?.ended(scopes[i]!);
            if (settled) return;
            values[n] = value;
            if (mode === "first") {
              settled = true;
              cancelOthers(i);
              resolve({ values, winner: n });
            } else if (--pending === 0) {
              settled = true;
              resolve({ values });
            }
          },
          (err) => {
            exec.verifier?.ended(scopes[i]!);
            if (settled) return;
            if (isInternal(err) && !scopes[i]!.cancelled) {
              settled = true;
              reject(err);
              return;
            }
            if (scopes[i]!.cancelled) return;
            failures.push({ branch: n, message: err instanceof Error ? err.message : String(err) });
            if (mode === "all" || --pending === 0) {
              settled = true;
              cancelOthers(i);
              reject(new BranchFailedError(exec.label, path, failures));
            }
          },
        );
    });
  });
}

async function runParallel(
  exec: RunExecution,
  scope: Scope,
  name: string,
  branches: Branches,
  mode: "all" | "first",
): Promise<unknown> {
  const kind = mode === "all" ? "join" : "race";
  const names = branchNames(branches, `ctx.${kind}("${name}")`);
  const { ordinal, recorded } = exec.slot(scope, name, kind);
  if (recorded?.status === "completed") {
    const out = JSON.parse(recorded.output ?? "null") as Record<string, unknown>;
    return mode === "all" ? withIterator(out, names) : out;
  }
  if (recorded?.status === "failed") rethrowRecorded(exec, recorded);
  const path = entryPath(scope.path, name);
  const row = recorded ?? exec.newEntry(scope, ordinal, name, kind, "running");
  if (!recorded) {
    setDetail(row, { branches: names });
    exec.mark(row);
  } else {
    reopenCancelled(
      exec,
      names.map((n) => `${path}[${n}]`),
    );
  }
  let result: { values: Record<string, unknown>; winner?: string };
  const losers: Scope[] = [];
  try {
    result = await runBranches(exec, scope, path, branches, names, mode, losers);
  } catch (err) {
    return failContainer(exec, row, err, isInternal(err) ? [] : cancelEntries(exec, losers));
  }
  const out =
    mode === "all" ? result.values : { winner: result.winner, value: result.values[result.winner!] };
  // Verify mode (replay checks) writes nothing, and must not change the rows it reads either: the
  // container a replay reopens is stored as read here, and decided again when the run resumes.
  if (exec.verifying) return mode === "all" ? withIterator(out as Record<string, unknown>, names) : out;
  row.output = toJson(out, `The result of ${kind} "${path}"`);
  row.status = "completed";
  row.endedAt = exec.core.clock.now();
  if (mode === "first") setDetail(row, { branches: names, winner: result.winner! });
  await commitWith(exec, row, cancelEntries(exec, losers));
  // As the record reads back, so a replay hands the code the same (see asRecorded in step.ts).
  const recordedOut = JSON.parse(row.output) as Record<string, unknown>;
  return mode === "all" ? withIterator(recordedOut, names) : recordedOut;
}

export function runJoin(
  exec: RunExecution,
  scope: Scope,
  name: string,
  branches: Branches,
): Promise<unknown> {
  return runParallel(exec, scope, name, branches, "all");
}

export function runRace(
  exec: RunExecution,
  scope: Scope,
  name: string,
  branches: Branches,
): Promise<unknown> {
  return runParallel(exec, scope, name, branches, "first");
}

export async function runLoop(
  exec: RunExecution,
  scope: Scope,
  name: string,
  options: LoopOptions<any, any, any, any>,
): Promise<unknown> {
  if (typeof options !== "object" || options === null || typeof options.run !== "function") {
    throw new InvalidInputError(
      `ctx.loop("${name}", { state, run }) needs a run function: run: async (ctx, state) => Loop.continue(state) or Loop.break(value).`,
    );
  }
  const keep = options.historyKeep ?? 20;
  if (!Number.isInteger(keep) || keep < 1)
    throw new InvalidInputError(`ctx.loop("${name}"): historyKeep must be a whole number of at least 1.`);
  const { ordinal, recorded } = exec.slot(scope, name, "loop");
  if (recorded?.status === "completed")
    return recorded.output === null ? undefined : JSON.parse(recorded.output);
  if (recorded?.status === "failed") {
    const info = fromJson<ErrorInfo>(recorded.error)!;
    throw Object.assign(new Error(info.message), { name: info.name });
  }
  const path = entryPath(scope.path, name);
  const row = recorded ?? exec.newEntry(scope, ordinal, name, "loop", "running");
  let detail = recorded ? detailOf(recorded) : undefined;
  if (!detail) {
    detail = {
      iteration: 0,
      state: JSON.parse(toJson(options.state ?? null, `The initial state of loop "${path}"`)),
    };
    setDetail(row, detail);
    exec.write(row);
  }
  for (;;) {
    detail.starts = { ...detail.starts, [String(detail.iteration)]: detail.state };
    const iterPath = `${path}#${detail.iteration}`;
    const iterScope = exec.openScope(iterPath, scope);
    let result: LoopResult<unknown, unknown>;
    try {
      result = await options.run(exec.contextFor(iterScope), detail.state);
      if (!result || typeof result !== "object" || !("continue" in result || "break" in result)) {
        throw new InvalidInputError(
          `Iteration ${detail.iteration} of loop "${path}" returned ${JSON.stringify(result)}; return Loop.continue(state) or Loop.break(value).`,
        );
      }
    } catch (err) {
      return failContainer(exec, row, err);
    } finally {
      exec.verifier?.ended(iterScope);
    }
    const done: number = detail.iteration;
    detail = { ...detail, iteration: done + 1 };
    if ("break" in result && result.break) {
      row.output = result.value === undefined ? null : toJson(result.value, `The result of loop "${path}"`);
      row.status = "completed";
      row.endedAt = exec.core.clock.now();
    } else {
      detail.state = JSON.parse(
        toJson((result as { state: unknown }).state ?? null, `The state of loop "${path}"`),
      );
    }
    compact(exec, path, done - keep, detail);
    setDetail(row, detail);
    await exec.commitEntry(row);
    if (row.status === "completed") return row.output === null ? undefined : JSON.parse(row.output);
  }
}

/** Deletes the history of iteration `i` (and anything nested in it), folding its state changes in. */
function compact(exec: RunExecution, path: string, i: number, detail: LoopDetail): void {
  if (i < 0 || exec.verifying) return;
  const rows = exec.history.removeTree(`${path}#${i}`);
  if (rows.length === 0) return;
  rows.sort((a, b) => (a.stateSeq ?? 0) - (b.stateSeq ?? 0));
  for (const r of rows) {
    if (r.stateDiff === null) continue;
    const diff = JSON.parse(r.stateDiff) as StateDiff;
    detail.compacted = detail.compacted
      ? { ...detail.compacted, diff: composeDiffs(detail.compacted.diff, diff), stateSeq: r.stateSeq! }
      : { diff, stateSeq: r.stateSeq!, iterations: 0 };
  }
  if (detail.starts) delete detail.starts[String(i)];
  if (detail.compacted) detail.compacted.iterations = i + 1;
  else detail.compacted = { diff: {}, stateSeq: 0, iterations: i + 1 };
  exec.core.writes.deleteEntries(
    exec.id,
    rows.map((r) => r.seq),
  );
}
