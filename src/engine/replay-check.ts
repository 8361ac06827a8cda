// The code check of a replay and of a deploy: runs a workflow's code over a history in verify mode and says
// whether the code reaches every recorded entry again, by the same name and kind, in the same places.
//
// IMPORTANT: a check executes no step body and writes nothing. Its execution gets a core whose writes and
// scheduler refuse to be used; recorded entries resolve from history, and anything new stops at the frontier
// (a promise that never settles). The check ends deterministically, never on a quiet spell: at the first
// divergence, when the workflow function ends, or once every scope the code opened has reached all the entries
// it holds (or ended, or was cancelled). Code that awaits something of its own (a timer, I/O) between entries
// is waited for, up to a limit on the injected clock; past it the check says it did not finish.

import { HistoryDivergedError } from "../errors.js";
import { NO_RUN_METRICS } from "../observability/metrics.js";
import type { RunRow } from "../storage/store.js";
import type { AnyWorkflow } from "../workflow.js";
import { afterClock, type Clock } from "./clock.js";
import { makeContext } from "./context.js";
import type { EngineCore } from "./core.js";
import type { Entry } from "./entries.js";
import { RunExecution, type VerifyObserver } from "./execution.js";
import type { Scope } from "./history.js";
import type { WriteQueue } from "./write-queue.js";

/** How long a check waits, on the injected clock, for code that awaits something of its own. */
export const CHECK_LIMIT_MS = 3000;

/** What a check found. */
export type CheckOutcome =
  /** The code reached every entry of the history again (or ended first) without a mismatch. */
  | { result: "matches" }
  /** The code asked for something else than history holds; the error names the entry and the fixes. */
  | { result: "diverged"; error: HistoryDivergedError }
  /** The code awaited something of its own for longer than the limit, or the check was aborted. */
  | { result: "unfinished" };

export interface CheckInput {
  clock: Clock;
  def: AnyWorkflow;
  run: RunRow;
  /** The history to match (a replay's kept entries, or all of a waiting run's). */
  entries: Entry[];
  /** The run's state (JSON) as the code would see it. */
  state: string;
  limitMs?: number;
  signal?: AbortSignal;
}

/** A core for verify executions: the clock is the engine's; writing or scheduling is a bug, and throws. */
function checkCore(clock: Clock, misuse: (what: string) => never): EngineCore {
  const writes = new Proxy({} as WriteQueue, {
    get: (_t, name) => misuse(`the write queue (${String(name)})`),
  });
  return {
    clock,
    writes,
    owner: "waymark-check",
    random: () => 0.5,
    watch: () => misuse("the scheduler (watch)"),
    unwatch: () => {},
    childRuns: {
      start: () => misuse("a child run's start"),
      byId: () => misuse("a child run's lookup"),
      byKey: () => misuse("a child run's lookup"),
      nameOf: () => undefined,
      watch: () => misuse("the scheduler (a child wait)"),
      unwatch: () => {},
    },
    suspended: () => misuse("suspension"),
    finished: () => misuse("the end of a run"),
    statusChanged: () => misuse("a rollback"),
    emitEntry: () => {},
    emitBroadcast: () => {},
    runTags: () => misuse("the run's tags"),
    metrics: NO_RUN_METRICS,
  };
}

/** Runs `def`'s code over the history given, executing nothing and writing nothing; says what it found. */
export function checkAgainstCode(input: CheckInput): Promise<CheckOutcome> {
  let misused: Error | null = null;
  const misuse = (what: string): never => {
    misused ??= new Error(`Internal error: a code check used ${what}; a check must write nothing.`);
    throw misused;
  };
  return new Promise<CheckOutcome>((resolve, reject) => {
    const scopes: Scope[] = [];
    const ended = new Set<Scope>();
    let done = false;
    let queued = false;
    let finished: { error: unknown } | null = null;
    // Copies: the code must not change the rows a replay goes on to store.
    const rows = input.entries.map((r) => ({ ...r }));
    const run = { ...input.run, version: input.def.version, state: input.state };

    const settle = (outcome: CheckOutcome | Error) => {
      if (done) return;
      done = true;
      cancelLimit();
      input.signal?.removeEventListener("abort", onAbort);
      exec.stop();
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };
    const evaluate = () => {
      queued = false;
      if (done) return;
      if (misused) return settle(misused);
      const fatal = exec.fatal ?? (finished?.error as Error | null | undefined);
      if (fatal instanceof HistoryDivergedError) return settle({ result: "diverged", error: fatal });
      if (finished) return settle({ result: "matches" });
      const open = scopes.some((s) => s.next < s.loaded && !s.cancelled && !ended.has(s));
      if (!open) settle({ result: "matches" });
    };
    // After the synchronous part that follows an event (a container reached opens its scopes right after).
    const later = () => {
      if (queued || done) return;
      queued = true;
      queueMicrotask(evaluate);
    };
    const observer: VerifyObserver = {
      opened: (scope) => {
        scopes.push(scope);
        later();
      },
      ended: (scope) => {
        ended.add(scope);
        later();
      },
      progressed: later,
      finished: (error) => {
        finished = { error };
        later();
      },
    };
    const onAbort = () => settle({ result: "unfinished" });
    const exec = new RunExecution(
      checkCore(input.clock, misuse),
      input.def,
      run,
      rows,
      [],
      makeContext,
      observer,
    );
    const cancelLimit = afterClock(input.clock, input.limitMs ?? CHECK_LIMIT_MS, () =>
      settle({ result: "unfinished" }),
    );
    if (input.signal?.aborted) return onAbort();
    input.signal?.addEventListener("abort", onAbort);
    exec.start();
  });
}
