// The deploy check after registry.start(): in the background, a batch at a time, each unfinished run that
// would diverge is told as a "warning" event and (the first few) a stderr line. A warning, not a refusal:
// the runs that still match go on, and the ones found fail as they would have, only now it is known.
//
// Bounded work: runs are read 100 at a time and checked side by side, the engine's own work runs between
// batches, and closing the engine stops the check. 10,000 waiting runs are 100 batches; see the README.

import { log } from "../log.js";
import type { DriftFinding, DriftReport } from "./drift-check.js";
import { checkUnfinishedRuns } from "./drift-check.js";
import type { Engine } from "./engine.js";

/** Most stderr lines the check writes, one per run; the rest are counted in its last line. */
const STDERR_LINES = 10;

/**
 * Starts the deploy check once the caller of start() holds the engine; resolves with its report. Runs an
 * execution here has begun (engine.resumedHere, noted from before start()) are not replayed again: their own
 * replay finds a divergence and fails the run with HISTORY_DIVERGED. The engine stops noting them once the
 * check ends.
 */
export function checkAfterStart(engine: Engine): Promise<DriftReport | null> {
  const signal = engine.closeSignal;
  const resumed = engine.resumedHere;
  const done = (report: DriftReport | null) => {
    engine.resumedHere = null;
    return report;
  };
  let told = 0;
  const tell = (f: DriftFinding) => {
    const [workflow, ...key] = f.run.split("/");
    engine.events.emit({
      type: "warning",
      code: "HISTORY_DRIFT",
      message: f.message,
      runId: f.runId,
      workflow: workflow!,
      key: key.join("/"),
      details: { ...f },
    });
    if (told++ < STDERR_LINES)
      log("warn", "waymark", `run "${f.run}" (${f.status}) will fail when it runs again: ${f.message}`, {
        code: "HISTORY_DRIFT",
        run: f.run,
      });
  };
  const report = new Promise<DriftReport | null>((resolve) => {
    // After the caller's continuation: listeners it adds right after start() see every warning.
    setImmediate(() => {
      if (signal.aborted) return resolve(null);
      checkUnfinishedRuns(engine.store, engine.defs, {
        clock: engine.clock,
        signal,
        onFinding: tell,
        ...(resumed ? { resumed } : {}),
        between: () => new Promise((r) => setImmediate(r)),
      }).then(
        (report) => {
          if (report.findings.length > STDERR_LINES && !report.aborted) {
            log(
              "warn",
              "waymark",
              `${report.findings.length} unfinished runs will fail when they run again (${report.findings.length - STDERR_LINES} more than shown); waymark check --db <file> --registry <module> lists them all.`,
            );
          }
          resolve(report);
        },
        (err: unknown) => {
          if (!signal.aborted) {
            log(
              "warn",
              "waymark",
              `the deploy check stopped before it looked at every unfinished run: ${err instanceof Error ? err.message : String(err)}`,
            );
          }
          resolve(null);
        },
      );
    });
  });
  return report.then(done);
}
