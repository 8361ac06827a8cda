// Every error Waymark raises: a stable `code`, and a message that says what happened and what to do.

import { divergence, entryNoun } from "./divergence.js";
import { ERROR_CODES, type ErrorCode } from "./error-codes.js";

/** A name as shown in a message: quoted, and cut at 80 characters (names can be hostile). */
function q(value: unknown): string {
  const text = String(value);
  return JSON.stringify(text.length > 80 ? `${text.slice(0, 80)}...` : text);
}

export { ERROR_CODES, type ErrorCode } from "./error-codes.js";

/** `text` ended as a sentence: a period added unless it already ends in one (or "?", "!", "…"). */
export function sentence(text: string): string {
  const t = text.trimEnd();
  return /[.?!…]$/.test(t) ? t : `${t}.`;
}

const CODES: ReadonlySet<string> = new Set(ERROR_CODES);

/** Base class: `code` is stable across releases; `details` carries the facts for programs. */
export class WaymarkError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown>;
  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = new.target.name;
    this.code = code;
    this.details = details;
  }
}

/** Thrown by a step to fail at once, without retries. */
export class FatalError extends Error {
  readonly code = "FATAL";
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = "FatalError";
  }
}

/** Bad input from the caller: the message names the field and the fix. Nothing was written. */
export class InvalidInputError extends WaymarkError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("INVALID_INPUT", message, details);
  }
}

/** A schedule of setup({ schedules }) that cannot fire as written (refused at setup). Code INVALID_SCHEDULE. */
export class InvalidScheduleError extends WaymarkError {
  constructor(schedule: string, message: string) {
    super("INVALID_SCHEDULE", message, { schedule });
  }
}

/**
 * A workflow's concurrency key function threw or returned something other than a non-empty string for a
 * run's input; the run was not created. Code INVALID_CONCURRENCY_KEY.
 */
export class ConcurrencyKeyError extends WaymarkError {
  constructor(run: string, problem: string, cause?: unknown) {
    super(
      "INVALID_CONCURRENCY_KEY",
      `Run "${run}" was not created: the concurrency key of workflow "${run.split("/")[0]}" ${problem}. workflow({ concurrency: { key } }) must return a non-empty string of at most 512 characters for every input (e.g. (input) => input.customerId); fix the input or the key function and start the run again.`,
      { run, problem },
      cause === undefined ? undefined : { cause },
    );
  }
}

/** No schedule of that name in the database. Code SCHEDULE_NOT_FOUND. */
export class ScheduleNotFoundError extends WaymarkError {
  constructor(name: string, known: string[]) {
    super(
      "SCHEDULE_NOT_FOUND",
      `There is no schedule ${JSON.stringify(name)}. Known schedules: ${known.map((k) => JSON.stringify(k)).join(", ") || "none (declare them in setup({ schedules }))"}; list them with engine.schedules.list() or waymark schedules.`,
      { name, known },
    );
  }
}

/** A tag whose name or value is not one (wrong type, empty or odd name): refused, nothing stored. Code INVALID_TAG. */
export class InvalidTagError extends WaymarkError {
  constructor(where: string, message: string, details: Record<string, unknown> = {}) {
    super("INVALID_TAG", `${where}: ${message}`, { where, ...details });
  }
}

/** Tags past a limit (how many a run holds, how long a name or value is): refused, nothing stored. Code TAG_LIMIT_EXCEEDED. */
export class TagLimitError extends WaymarkError {
  constructor(where: string, limit: string, max: number, actual: number, message: string) {
    super("TAG_LIMIT_EXCEEDED", `${where}: ${message}`, { where, limit, max, actual });
  }
}

/** A value nested deeper than Waymark accepts; refused before anything walks it. Code INVALID_INPUT. */
export class ValueTooDeepError extends InvalidInputError {
  constructor(what: string, limit: number, path: string) {
    const where = path.length > 120 ? `${path.slice(0, 120)}...` : path;
    super(
      `${what} nests objects and arrays more than ${limit} levels deep (the limit), at ${where || "its top"}. Flatten it (keep deep data as a JSON string, or store it elsewhere and pass its id); nothing was stored.`,
      { what, limit, path: where },
    );
  }
}

/** ctx.state was changed outside a step, where the change could not be recorded. */
export class StateReadOnlyError extends WaymarkError {
  constructor(run: string, key: string) {
    super(
      "STATE_READ_ONLY",
      `Run "${run}": ctx.state is read-only outside a step (tried to change ${JSON.stringify(key)}). Change state inside a step, where the change is recorded with it: await ctx.step("name", (step) => { step.state.${key} = ... }).`,
      { run, key },
    );
  }
}

/** The registry lacks versions that live runs still need (a deploy dropped them). */
export class VersionMissingError extends WaymarkError {
  constructor(missing: string[]) {
    super(
      "VERSION_MISSING",
      `This registry lacks workflow versions that live runs still need: ${missing.join("; ")}. Keep those versions registered beside the new one (setup({ use: { name: [v1, v2] } })) until their runs finish, or cancel the runs.`,
      { missing },
    );
  }
}

/** A replay that cannot be done as asked; the message says how to ask (fromStep, another version). */
export class ReplayError extends WaymarkError {
  constructor(
    code: "REPLAY_NEEDS_STEP" | "REPLAY_DIVERGED" | "REPLAY_NOT_STORED" | "REPLAY_REFUSED",
    message: string,
    details: Record<string, unknown> = {},
  ) {
    super(code, message, details);
  }
}

/** A bulk plan token that cannot be acted on: unknown, expired before it started, or being carried out. */
export class PlanError extends WaymarkError {
  constructor(code: "PLAN_NOT_FOUND" | "PLAN_EXPIRED" | "PLAN_BUSY", message: string, token: string) {
    super(code, message, { plan: token });
  }
}

/** An error another process answered a request with (a replay it carried out): its code is kept. */
export class RemoteError extends WaymarkError {}

/** An MCP client's config file that waymark init cannot merge into; the message holds the entry to add by hand. */
export class ClientConfigError extends WaymarkError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("INVALID_CLIENT_CONFIG", message, details);
  }
}

/** True when `code` is one of Waymark's error codes (a code read back from the database or another process). */
export function isErrorCode(code: unknown): code is ErrorCode {
  return typeof code === "string" && CODES.has(code);
}

/** A page cursor that no page gave out (edited, cut, or of another list). Code INVALID_INPUT. */
export class InvalidCursorError extends InvalidInputError {
  constructor(cursor: string) {
    super(
      `Invalid cursor ${q(cursor)}: pass the nextCursor of the previous page unchanged, or leave it out for the first page.`,
      { cursor: cursor.slice(0, 80) },
    );
  }
}

export class UnknownWorkflowError extends WaymarkError {
  constructor(name: string, known: string[]) {
    super(
      "WORKFLOW_NOT_FOUND",
      `There is no workflow ${q(name)}. ${known.length ? `Registered workflows: ${known.join(", ")}.` : "No workflows are registered: pass them to setup({ use: { ... } })."}`,
      { workflow: name, known },
    );
  }
}

/** No run by that workflow and key (or by that id). */
export class RunNotFoundError extends WaymarkError {
  constructor(workflow: string, key: string);
  constructor(id: number);
  constructor(workflow: string | number, key?: string) {
    if (typeof workflow === "number")
      super("RUN_NOT_FOUND", `There is no run #${workflow}.`, { id: workflow });
    else {
      super(
        "RUN_NOT_FOUND",
        `There is no run ${q(`${workflow}/${key}`)}. Check the key (keys are case-sensitive), or create it with getOrCreate(${q(workflow)}, ${q(key)}).`,
        { workflow, key },
      );
    }
  }
}

/** A run has no entry by that id or path; the message lists the paths it has. */
export class EntryNotFoundError extends WaymarkError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("ENTRY_NOT_FOUND", message, details);
  }
}

/** A run that ended cannot take what was asked (a message): replay it first. */
export class RunFinishedError extends WaymarkError {
  constructor(run: string, status: string) {
    super(
      "RUN_FINISHED",
      `Run "${run}" is ${status}, so no code will read a message sent to it. Replay it first if it should run again.`,
      { run, status },
    );
  }
}

/** This process lacks the code a call needs (attached, or another version): the message says where to call. */
export class NoCodeError extends WaymarkError {
  constructor(message: string, details: Record<string, unknown> = {}) {
    super("NO_CODE", message, details);
  }
}

export class UnknownQueueError extends WaymarkError {
  constructor(workflow: string, queue: string, known: string[]) {
    super(
      "QUEUE_NOT_FOUND",
      `Workflow ${q(workflow)} has no queue ${q(queue)}. ${known.length ? `Its queues are: ${known.join(", ")}.` : `It declares no queues: add queues: { ${queue}: z.object({...}) } to its definition.`}`,
      { workflow, queue, known },
    );
  }
}

export class UnknownActionError extends WaymarkError {
  constructor(workflow: string, action: string, known: string[]) {
    super(
      "ACTION_NOT_FOUND",
      `Workflow ${q(workflow)} has no action ${q(action)}. ${known.length ? `Its actions are: ${known.join(", ")}.` : "It declares no actions."}`,
      { workflow, action, known },
    );
  }
}

export class InvalidMessageError extends WaymarkError {
  constructor(run: string, queue: string, problems: string[]) {
    super(
      "INVALID_MESSAGE",
      `The message for queue "${queue}" of run "${run}" does not match the queue's schema: ${problems.join("; ")}. Fix the body and send it again; nothing was stored.`,
      { run, queue, problems },
    );
  }
}

export class NotSerializableError extends WaymarkError {
  constructor(what: string, path: string, type: string, hint: string) {
    super(
      "NOT_SERIALIZABLE",
      `${what} is not JSON-serialisable: ${path === "" ? "the value" : `the value at ${path}`} is ${type}. ${hint}`,
      { what, path, type },
    );
  }
}

export class InvalidNameError extends WaymarkError {
  constructor(kind: string, name: unknown, why: string) {
    super("INVALID_NAME", `Invalid ${kind} name ${q(name)}: ${why}`, { kind, name });
  }
}

export class DuplicateEntryError extends WaymarkError {
  constructor(run: string, path: string, kind: string) {
    super(
      "DUPLICATE_ENTRY",
      `Run "${run}": the ${kind} "${path}" takes a name already used in this scope. Steps, sleeps, queue waits, joins, races, loops and ctx.version / ctx.removed markers share one set of names per scope: give each call its own name (e.g. \`charge-\${i}\`), or use ctx.loop for repeated work. Did you forget to await a previous call?`,
      { run, path, kind },
    );
  }
}

/** Describes one history entry in a divergence report. */
export interface EntryRef {
  kind: string;
  name: string;
  /** What a wait waits for, when the kind and name match but that changed. */
  shape?: string;
}

export class HistoryDivergedError extends WaymarkError {
  constructor(
    run: string,
    scope: string,
    ordinal: number,
    recorded: EntryRef | null,
    requested: EntryRef | null,
    replayFrom: string | null,
  ) {
    const where = scope === "" ? "the root scope" : `scope "${scope}"`;
    const fixes: string[] = [];
    if (recorded && requested && recorded.name !== requested.name) {
      fixes.push(
        `if "${recorded.name}" was renamed, restore its old name`,
        `if it was removed, put ctx.removed("${recorded.name}") where it stood`,
      );
    } else if (recorded && !requested) {
      fixes.push(`if "${recorded.name}" was removed, put ctx.removed("${recorded.name}") where it stood`);
    } else if (recorded && requested && recorded.kind === requested.kind) {
      fixes.push(
        `keep "${recorded.name}" waiting for ${recorded.shape ?? "what it waited for"}, or give the changed wait a new name`,
      );
    } else if (recorded && requested) {
      fixes.push(
        `keep "${recorded.name}" a ${entryNoun(recorded.kind)}, or rename the new ${entryNoun(requested.kind)}`,
      );
    }
    fixes.push(
      `branch new behaviour with ctx.version("<change-name>", 2)`,
      "or register the change as a new workflow version (workflow({ version: N+1, ... })) so this run keeps its code",
    );
    super(
      "HISTORY_DIVERGED",
      `Run "${run}" no longer matches its history at entry #${ordinal + 1} of ${where}: ${divergence(recorded, requested, "asked")}. To fix: ${fixes.join("; ")}.${replayFrom ? ` Or replay the run from "${replayFrom}", the earliest entry a replay could start from.` : ""}`,
      { run, scope, ordinal, recorded, requested, replayFrom },
    );
  }
}

export class StepFailedError extends WaymarkError {
  constructor(
    run: string,
    path: string,
    attempts: number,
    cause: { name: string; message: string },
    fatal: boolean,
  ) {
    super(
      "STEP_FAILED",
      fatal
        ? `Step "${path}" of run "${run}" failed with a fatal error (not retried): ${cause.name}: ${cause.message}`
        : `Step "${path}" of run "${run}" failed after ${attempts} attempt${attempts === 1 ? "" : "s"}: ${cause.name}: ${cause.message}`,
      { run, step: path, attempts, cause, fatal },
    );
  }
}

export class StepTimeoutError extends WaymarkError {
  constructor(path: string, timeoutMs: number, attempt: number) {
    super(
      "STEP_TIMEOUT",
      `Step "${path}" timed out after ${timeoutMs} ms on attempt ${attempt}. Raise its timeout option, or make the step finish sooner (it receives an AbortSignal as step.signal).`,
      { step: path, timeoutMs, attempt },
    );
  }
}

export class BranchFailedError extends WaymarkError {
  constructor(run: string, path: string, failed: Array<{ branch: string; message: string }>) {
    super(
      "BRANCH_FAILED",
      `${failed.length === 1 ? "A branch" : "Branches"} of "${path}" in run "${run}" failed: ${failed.map((f) => `${f.branch}: ${f.message}`).join("; ")}`,
      { run, path, failed },
    );
  }
}

export class RunFailedError extends WaymarkError {
  constructor(run: string, error: { name?: string; message?: string } | null) {
    super(
      "RUN_FAILED",
      `Run "${run}" failed: ${sentence(`${error?.name ?? "Error"}: ${error?.message ?? "unknown error"}`)} Read its history to see why, fix the code, then replay it.`,
      { run, error },
    );
  }
}

/** A child run (ctx.child) failed or was cancelled: catch it in the parent to go on without its result. */
export class ChildRunFailedError extends WaymarkError {
  constructor(
    run: string,
    path: string,
    child: string,
    status: string,
    error: { name?: string; message?: string } | null,
  ) {
    super(
      "CHILD_RUN_FAILED",
      status === "cancelled"
        ? `Child run "${child}" of "${run}" (entry "${path}") ${sentence(`was cancelled${error?.message ? `: ${error.message}` : ""}`)} Replay the child run, then the parent from "${path}"; or catch ChildRunFailedError in the parent to go on without it.`
        : `Child run "${child}" of "${run}" (entry "${path}") failed: ${sentence(`${error?.name ?? "Error"}: ${error?.message ?? "unknown error"}`)} Diagnose the child run (diagnose_run on ${child}), fix it and replay it; the parent resumes when it completes. Or catch ChildRunFailedError in the parent to go on without it.`,
      { run, entry: path, child, status, error },
    );
  }
}

/** ctx.child asked for a key that a run of that workflow already holds without being this run's child. */
export class ChildKeyTakenError extends WaymarkError {
  constructor(run: string, path: string, child: string, parent: string | null) {
    super(
      "CHILD_KEY_TAKEN",
      `ctx.child "${path}" of run "${run}" asked for run "${child}", which exists already ${parent ? `as a child of "${parent}"` : "and was not started by a parent"}. Give each child a key of its own, derived from the parent's (e.g. "pay-" + ctx.key).`,
      { run, entry: path, child, parent },
    );
  }
}

export class RunCancelledError extends WaymarkError {
  constructor(run: string) {
    super("RUN_CANCELLED", `Run "${run}" was cancelled. Replay it to run it again.`, { run });
  }
}

export class ResultTimeoutError extends WaymarkError {
  constructor(run: string, timeoutMs: number, status: string) {
    super(
      "RESULT_TIMEOUT",
      `Run "${run}" did not finish within ${timeoutMs} ms (it is ${status}). Wait longer, or look at what it waits on with status() and history().`,
      { run, timeoutMs, status },
    );
  }
}

export class RunBusyError extends WaymarkError {
  constructor(run: string, what: string) {
    super(
      "RUN_BUSY",
      `Run "${run}" is executing right now, so it cannot ${what}. Cancel it first, or wait until it is waiting, sleeping or finished.`,
      {
        run,
      },
    );
  }
}

export class EngineClosedError extends WaymarkError {
  constructor() {
    super("ENGINE_CLOSED", "The engine has been closed. Start a new one with registry.start().");
  }
}

/** A storage problem: the message names the file and what to do; nothing was partially written. */
export class StorageError extends WaymarkError {
  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    options?: ErrorOptions,
  ) {
    super(code, message, details, options);
  }
}

/** An engine started while starts were held (see start-guard.ts): refused before it opened anything. */
export class EngineStartRefusedError extends WaymarkError {
  constructor(where: string, why: string) {
    super(
      "ENGINE_START_REFUSED",
      `${where} was called while ${why}; that module must only define and export the registry. Start the engine in another file (your app's entry point), or only when the module is run directly.`,
      { where, why },
    );
  }
}

/** Another process holds the run's lease: this process must stop executing it. */
export class LeaseLostError extends WaymarkError {
  readonly runId: number;
  constructor(runId: number, owner: string | null) {
    super(
      "LEASE_LOST",
      `Run #${runId} is now leased by ${owner ?? "nobody"}; this process stopped executing it.`,
      { runId, owner },
    );
    this.runId = runId;
  }
}
