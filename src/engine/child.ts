// ctx.child: starts (idempotently, by workflow and key) a run of another workflow and waits for its end.
//
// IMPORTANT invariants:
// - The child is created (with parent_run_id) before the parent records its entry; a crash between the two
//   finds the same child again by its key on resume, so exactly one exists.
// - The parent waits like any wait: it suspends holding no memory, `wait_runs` naming the child; the store
//   wakes it in the commit that ends the child (see store.ts), in this process or another.

import { ChildKeyTakenError, ChildRunFailedError, InvalidInputError } from "../errors.js";
import { ATTR } from "../observability/tracing.js";
import type { RunRow } from "../storage/store.js";
import { TERMINAL_STATUSES } from "../storage/store.js";
import type { AnyWorkflow } from "../workflow.js";
import type { ChildOptions } from "./child-types.js";
import { type ChildDetail, detailOf, type EntryOf, entryPath, setDetail } from "./entries.js";
import { type ErrorInfo, errorInfo } from "./error-info.js";
import type { RunExecution } from "./execution.js";
import type { Scope } from "./history.js";
import { fromJson } from "./json.js";

export type { ChildAddress, ChildOptions } from "./child-types.js";

/** Runs ctx.child(name, workflow, options) in `scope`. */
export async function runChild(
  exec: RunExecution,
  scope: Scope,
  name: string,
  workflow: string | AnyWorkflow,
  options: ChildOptions,
): Promise<unknown> {
  const { ordinal, recorded } = exec.slot(scope, name, "child");
  const path = entryPath(scope.path, name);
  if (recorded?.status === "completed") return fromJson(recorded.output);
  if (recorded?.status === "failed") throw failureOf(exec, path, recorded);
  if (!recorded) {
    if (exec.holding) return exec.frontier();
    const wf = workflowName(exec, name, workflow);
    checkOptions(name, options);
    const child = await exec.core.childRuns.start({
      workflow: wf,
      key: options.key,
      input: options.input,
      parentRunId: exec.id,
    });
    exec.assertLive(scope);
    if (child.parentRunId !== exec.id) {
      const parent =
        child.parentRunId === null ? undefined : await exec.core.childRuns.byId(child.parentRunId);
      throw new ChildKeyTakenError(
        exec.label,
        path,
        `${wf}/${options.key}`,
        parent ? `${parent.workflow}/${parent.key}` : null,
      );
    }
    const detach = options.detach === true;
    const row = exec.newEntry(scope, ordinal, name, "child", detach ? "completed" : "waiting");
    setDetail(row, { workflow: wf, key: options.key, runId: child.id, ...(detach ? { detach } : {}) });
    row.input = options.input === undefined ? null : JSON.stringify(options.input);
    if (detach) {
      row.endedAt = row.startedAt;
      row.output = JSON.stringify({ workflow: wf, key: options.key });
      await exec.commitEntry(row);
      return { workflow: wf, key: options.key };
    }
    await exec.commitEntry(row);
    return awaitChild(exec, scope, path, row);
  }
  if (exec.holding) return exec.frontier();
  return awaitChild(exec, scope, path, recorded);
}

/** Waits for the child of a recorded entry to end, then records how it ended. */
async function awaitChild(
  exec: RunExecution,
  scope: Scope,
  path: string,
  row: EntryOf<"child">,
): Promise<unknown> {
  const detail = detailOf(row)!;
  const label = `${detail.workflow}/${detail.key}`;
  for (;;) {
    exec.check(scope);
    // By address, not id: an id changes when a database is imported into another.
    const child = await exec.core.childRuns.byKey(detail.workflow, detail.key);
    exec.assertLive(scope);
    if (!child) {
      throw new InvalidInputError(
        `Child run "${label}" of "${exec.label}" (entry "${path}") is gone from the database. Replay the parent from "${path}" to start it again.`,
      );
    }
    if (TERMINAL_STATUSES.includes(child.status)) return settle(exec, path, row, detail, child);
    await exec.wait({ kind: "child", child: { id: child.id, label }, deadline: null, scope, path });
  }
}

async function settle(
  exec: RunExecution,
  path: string,
  row: EntryOf<"child">,
  detail: ChildDetail,
  child: RunRow,
): Promise<unknown> {
  const now = exec.core.clock.now();
  setDetail(row, { ...detail, childStatus: child.status });
  row.endedAt = now;
  exec.trace?.wait("child", path, row.startedAt ?? now, now, { [ATTR.outcome]: child.status });
  if (child.status === "completed") {
    row.status = "completed";
    row.output = child.output;
    await exec.commitEntry(row);
    return fromJson(child.output);
  }
  const err = new ChildRunFailedError(
    exec.label,
    path,
    `${detail.workflow}/${detail.key}`,
    child.status,
    fromJson<ErrorInfo>(child.error) ?? null,
  );
  row.status = "failed";
  row.error = JSON.stringify(errorInfo(err));
  await exec.commitEntry(row);
  throw err;
}

/** The error a recorded failed child entry throws again on replay. */
function failureOf(exec: RunExecution, path: string, row: EntryOf<"child">): ChildRunFailedError {
  const detail = detailOf(row);
  const info = fromJson<ErrorInfo>(row.error);
  const d = (info?.details ?? {}) as { error?: { name?: string; message?: string } | null };
  return new ChildRunFailedError(
    exec.label,
    path,
    detail ? `${detail.workflow}/${detail.key}` : "unknown",
    detail?.childStatus ?? "failed",
    d.error ?? null,
  );
}

function workflowName(exec: RunExecution, name: string, workflow: string | AnyWorkflow): string {
  if (typeof workflow === "string") return workflow;
  const found =
    typeof workflow === "object" && workflow !== null ? exec.core.childRuns.nameOf(workflow) : undefined;
  if (found) return found;
  throw new InvalidInputError(
    `ctx.child("${name}", workflow, ...) takes the name of a registered workflow (or its definition as registered with setup({ use })); got ${typeof workflow === "object" ? "a definition that is not registered" : String(workflow)}. Register the child workflow beside the parent.`,
  );
}

function checkOptions(name: string, options: ChildOptions): void {
  if (typeof options !== "object" || options === null || typeof options.key !== "string") {
    throw new InvalidInputError(
      `ctx.child("${name}", workflow, { key, input }) needs a key: the child's run key, e.g. { key: "pay-" + ctx.key, input }.`,
    );
  }
  if (options.detach !== undefined && typeof options.detach !== "boolean") {
    throw new InvalidInputError(
      `ctx.child("${name}", ...): detach is true or false, got ${JSON.stringify(options.detach)}.`,
    );
  }
}
