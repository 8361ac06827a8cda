// Cancelling a run: at once when it executes here or nowhere, by a request to the process that runs it
// otherwise. Its entries in progress end as cancelled; its history is kept.

import { RunCancelledError } from "../errors.js";
import { type RunRow, type RunStatus, TERMINAL_STATUSES } from "../storage/store.js";
import { cancelEntries } from "./branches.js";
import type { Engine } from "./engine.js";

/** What a cancelled run records as its error: who cancelled it and when. */
function cancelReason(label: string, by: string, at: number): string {
  return JSON.stringify({
    name: "Cancelled",
    code: "RUN_CANCELLED",
    message: `Run "${label}" was cancelled by ${by} at ${new Date(at).toISOString()}.`,
    details: { by, at },
  });
}

/** Cancels run `runId` on behalf of `by`; "requested" when another process executes it and was asked to. */
export async function cancelRun(engine: Engine, runId: number, by: string): Promise<RunStatus | "requested"> {
  const exec = engine.active.get(runId);
  const now = engine.clock.now();
  if (exec) {
    // Its entries in progress end as cancelled, a running step's attempt too, before anything else.
    cancelEntries(exec, [exec.root]);
    exec.stop(new RunCancelledError(exec.label));
    engine.active.delete(runId);
    await engine.writes.flush();
    await engine.store.cancelRun(runId, now, engine.owner, cancelReason(exec.label, by, now));
    engine.events.emit({ type: "run", runId, workflow: exec.workflow, key: exec.key, status: "cancelled" });
    return "cancelled";
  }
  const row = await engine.runRow(runId);
  if (TERMINAL_STATUSES.includes(row.status)) return row.status;
  if (
    await engine.store.cancelRun(
      runId,
      now,
      engine.owner,
      cancelReason(`${row.workflow}/${row.key}`, by, now),
    )
  ) {
    engine.events.emit({ type: "run", runId, workflow: row.workflow, key: row.key, status: "cancelled" });
    return "cancelled";
  }
  await engine.writes.request(runId, "cancel", JSON.stringify({ by }));
  return "requested";
}

/** Cancels a run this process just claimed (for a cancel request). */
export async function cancelClaimed(engine: Engine, run: RunRow, by: string): Promise<void> {
  await engine.writes.flush();
  const now = engine.clock.now();
  if (
    await engine.store.cancelRun(
      run.id,
      now,
      engine.owner,
      cancelReason(`${run.workflow}/${run.key}`, by, now),
    )
  ) {
    engine.events.emit({
      type: "run",
      runId: run.id,
      workflow: run.workflow,
      key: run.key,
      status: "cancelled",
    });
  }
}
