// Cancelling a run: at once when it executes here or nowhere, by a request to the process that runs it
// otherwise. Its entries in progress end as cancelled; its history is kept.

import { RunCancelledError } from "../errors.js";
import { type RunRow, type RunStatus, TERMINAL_STATUSES } from "../storage/store.js";
import { cancelEntries } from "./branches.js";
import type { Engine } from "./engine.js";
import { asEntries, detailOf } from "./entries.js";

/** What a cancelled run records as its error: who cancelled it and when. */
function cancelReason(label: string, by: string, at: number): string {
  return JSON.stringify({
    name: "Cancelled",
    code: "RUN_CANCELLED",
    message: `Run "${label}" was cancelled by ${by} at ${new Date(at).toISOString()}.`,
    details: { by, at },
  });
}

/**
 * Cancels run `runId` on behalf of `by`; "requested" when another process executes it and was asked to.
 * With `rollback`, the handlers of its completed steps run first ("rolling-back" while they do); a run
 * not executing here is asked by a request, which the process that claims it carries out.
 */
export async function cancelRun(
  engine: Engine,
  runId: number,
  by: string,
  rollback = false,
): Promise<RunStatus | "requested"> {
  const exec = engine.active.get(runId);
  const now = engine.clock.now();
  // A rollback under way finishes: stopping it halfway would leave work neither done nor undone.
  if (exec?.rollingBack) return "rolling-back";
  if (exec && rollback && exec.cancelWithRollback(cancelReason(exec.label, by, now))) return "rolling-back";
  if (exec) {
    // Its entries in progress end as cancelled, a running step's attempt too, before anything else.
    cancelEntries(exec, [exec.root]);
    exec.stop(new RunCancelledError(exec.label));
    engine.active.delete(runId);
    await engine.writes.flush();
    await engine.store.cancelRun(runId, now, engine.owner, cancelReason(exec.label, by, now));
    engine.events.emit({ type: "run", runId, workflow: exec.workflow, key: exec.key, status: "cancelled" });
    await cancelledEnded(engine, runId, exec.label);
    return "cancelled";
  }
  const row = await engine.runRow(runId);
  if (TERMINAL_STATUSES.includes(row.status)) return row.status;
  if (rollback) {
    await engine.writes.request(runId, "cancel", JSON.stringify({ by, rollback: true, owner: engine.owner }));
    engine.poke();
    return "requested";
  }
  if (
    await engine.store.cancelRun(
      runId,
      now,
      engine.owner,
      cancelReason(`${row.workflow}/${row.key}`, by, now),
    )
  ) {
    engine.events.emit({ type: "run", runId, workflow: row.workflow, key: row.key, status: "cancelled" });
    await cancelledEnded(engine, runId, `${row.workflow}/${row.key}`);
    return "cancelled";
  }
  await engine.writes.request(runId, "cancel", JSON.stringify({ by, owner: engine.owner }));
  return "requested";
}

/**
 * A cancel with rollback of a run this process just claimed: recorded rolling-back with the cancel as its
 * cause, so the execution that resumes it replays the code to learn the handlers, then undoes.
 */
export function rollBackClaimed(engine: Engine, run: RunRow, by: string): void {
  const now = engine.clock.now();
  engine.writes.patch(
    {
      id: run.id,
      status: "rolling-back",
      error: cancelReason(`${run.workflow}/${run.key}`, by, now),
      updatedAt: now,
    },
    engine.owner,
  );
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
    await cancelledEnded(engine, run.id, `${run.workflow}/${run.key}`);
  }
}

/** A cancelled run: a parent waiting on it here wakes; its unfinished, non-detached children are cancelled. */
export async function cancelledEnded(engine: Engine, runId: number, label: string): Promise<void> {
  engine.childRuns.ended(runId);
  engine.poke();
  const children = (await engine.store.childRuns(runId)).filter((c) => !TERMINAL_STATUSES.includes(c.status));
  if (children.length === 0) return;
  const detached = new Set<string>();
  for (const e of asEntries(await engine.store.allEntries(runId))) {
    if (e.kind !== "child") continue;
    const detail = detailOf(e);
    if (detail?.detach) detached.add(`${detail.workflow}/${detail.key}`);
  }
  for (const child of children) {
    if (!detached.has(`${child.workflow}/${child.key}`)) await cancelRun(engine, child.id, `parent ${label}`);
  }
}
