// Failed runs: a step that ran out of retries, a fatal error, a step timeout, code drift, or workflow code
// that threw outside any step.

import { divergence, entryPhrase } from "../divergence.js";
import type { HistoryEntry } from "../engine/views.js";
import { person, replayActions } from "./actions.js";
import { causeKind, latestError, stepEvidence, stepFrame } from "./attempts.js";
import { culpritOf, type Finding, innermostFailed, type RunFacts } from "./facts.js";
import { brief, causeOf, cut, errorLine, plural } from "./format.js";
import { entryFailureKey, runFailureKey } from "./signatures.js";
import { frameText, topUserFrame } from "./stack.js";
import type { Evidence } from "./types.js";

/** The diagnosis of a failed run. */
export async function diagnoseFailed(facts: RunFacts): Promise<Finding> {
  if (facts.info.error?.code === "HISTORY_DIVERGED") return drift(facts);
  if (
    facts.info.error?.code === "ROLLBACK_FAILED" &&
    (facts.info.error.details?.cause as { code?: unknown } | undefined)?.code === "HISTORY_DIVERGED"
  )
    return driftInRollback(facts);
  const failed = innermostFailed(facts.entries).filter((e) => e.kind === "step");
  if (failed.length) return stepFailure(facts, failed[0]!);
  return workflowError(facts, innermostFailed(facts.entries)[0] ?? null);
}

async function stepFailure(facts: RunFacts, entry: HistoryEntry): Promise<Finding> {
  const error = latestError(entry);
  const attempts = entry.attempts?.length ?? 0;
  const fatal = entry.error?.details?.fatal === true;
  const timedOut =
    !fatal && (error?.code === "STEP_TIMEOUT" || entry.attempts?.at(-1)?.status === "timed-out");
  const frame = stepFrame(entry);
  const where = frame ? ` (${frameText(frame)})` : "";
  const msg = cut(error?.message ?? "unknown error", 160);
  const evidence = await stepEvidence(facts, entry);
  const what = `the run from "${entry.path}"`;
  const nextActions = [];
  let summary: string;
  if (fatal) {
    summary = `Step "${entry.path}" threw ${error?.name ?? "FatalError"} on attempt ${attempts}, which is never retried: ${msg}${where}. Fix what it reports (the data, account or code it names), then replay ${what}.`;
    nextActions.push(
      person(`Fix what the fatal error reports: "${msg}"${frame ? `, thrown at ${frameText(frame)}` : ""}.`),
    );
  } else if (timedOut) {
    const ms = (error?.details?.timeoutMs as number | undefined) ?? null;
    summary = `Step "${entry.path}" timed out${ms !== null ? ` after ${ms} ms` : ""} on each of its ${plural(attempts, "attempt")}. Raise its timeout option or make it finish sooner (it receives step.signal), then replay ${what}.`;
    nextActions.push(
      person(
        `Raise the timeout option of step "${entry.path}"${ms !== null ? ` (now ${ms} ms)` : ""} or make it faster${frame ? ` (${frameText(frame)})` : ""}.`,
      ),
    );
  } else {
    const kind = causeKind(error);
    const why =
      kind === "outside"
        ? "It looks like an outside service failing: once it works again, replay"
        : kind === "bug"
          ? "It looks like a bug in the step's code: fix it, deploy, then replay"
          : "Fix the cause, then replay";
    summary = `Step "${entry.path}" failed after ${plural(attempts, "attempt")} with ${error?.name ?? "Error"}: ${msg}${where}. ${why} ${what}.`;
    nextActions.push(
      person(
        kind === "outside"
          ? `Make sure the service behind "${entry.path}" works again (see the error above).`
          : kind === "bug"
            ? `Fix the code at ${frame ? frameText(frame) : `step "${entry.path}"`} (the ${error?.name ?? "Error"} above) and deploy it.`
            : `Fix what makes "${entry.path}" throw${frame ? ` at ${frameText(frame)}` : ""}: its code, its input or the service it calls.`,
      ),
    );
  }
  nextActions.push(...replayActions(facts.address, null, `"${entry.path}"`));
  return {
    category: fatal ? "fatal-error" : timedOut ? "step-timeout" : "step-failed",
    culprit: culpritOf(entry),
    summary,
    evidence,
    nextActions,
    failure: entryFailureKey(facts.info.workflow, entry),
  };
}

interface DriftDetails {
  scope: string;
  ordinal: number;
  recorded: { kind: string; name: string } | null;
  requested: { kind: string; name: string } | null;
  replayFrom: string | null;
}

function drift(facts: RunFacts): Finding {
  const { info } = facts;
  const d = (info.error?.details ?? {}) as unknown as DriftDetails;
  const entry = facts.entries.find((e) => e.scope === d.scope && e.ordinal === d.ordinal) ?? null;
  const where = d.scope === "" ? "the root scope" : `scope "${d.scope}"`;
  const differs = divergence(d.recorded, d.requested);
  const fixes: string[] = [];
  if (d.recorded && d.requested && d.recorded.name !== d.requested.name)
    fixes.push(`restore the old name "${d.recorded.name}" if it was renamed`);
  if (d.recorded) fixes.push(`put ctx.removed("${d.recorded.name}") where it stood if it was removed`);
  fixes.push(
    `branch the change with ctx.version("<change>", 2)`,
    `or register it as workflow version ${info.version + 1}`,
  );
  const evidence: Evidence[] = [
    {
      kind: "drift",
      fact: `entry #${d.ordinal + 1} of ${where}: ${differs}`,
      ...(entry ? { entry: entry.id } : {}),
    },
    {
      kind: "version",
      fact: `the run is pinned to version ${info.version} of "${info.workflow}"`,
      ref: "run",
    },
    { kind: "fix", fact: `to keep this run on its recorded path: ${fixes.join("; ")}` },
  ];
  if (d.replayFrom) {
    const from = facts.entries.find((e) => e.path === d.replayFrom);
    evidence.push({
      kind: "replay-from",
      fact: `the earliest entry a replay could start from is "${d.replayFrom}"`,
      ...(from ? { entry: from.id } : {}),
    });
  }
  const nextActions = d.replayFrom
    ? replayActions(facts.address, d.replayFrom, `from "${d.replayFrom}" on the new code`)
    : [
        person(
          `Change the code back so that ${where} asks for ${d.recorded ? entryPhrase(d.recorded) : "nothing more"} again (${fixes.join("; ")}).`,
        ),
      ];
  return {
    category: "code-drift",
    culprit: entry ? culpritOf(entry) : null,
    summary: `The deployed code no longer matches this run's history: at entry #${d.ordinal + 1} of ${where}, ${differs}. ${d.replayFrom ? `Replay from "${d.replayFrom}" to run the new code from there, or keep the old path with ctx.removed, ctx.version or a new workflow version.` : "Restore the code the run started with, or use ctx.removed, ctx.version or a new workflow version."}`,
    evidence,
    nextActions,
    failure: runFailureKey(info),
  };
}

/** '"a"', '"a" and "b"', '"a", "b" and "c"'. */
function listed(items: string[]): string {
  return items.length < 2 ? items.join("") : `${items.slice(0, -1).join(", ")} and ${items.at(-1)}`;
}

/**
 * Code drift that failed a run which then rolled back: the rollback stops at the first step whose handler
 * the code no longer reaches (it diverged before it). Not a bug in the workflow's code at a stack frame (the
 * frame is Waymark's): the fix is the code's old path, and a replay that then runs the remaining handlers.
 */
function driftInRollback(facts: RunFacts): Finding {
  const { info } = facts;
  const cause = info.error!.details!.cause as { details?: DriftDetails };
  const rollback = info.error!.details!.rollback as
    | { step?: string; undone?: number; total?: number; unreachable?: string[] }
    | undefined;
  const d = (cause.details ?? {}) as DriftDetails;
  const entry = facts.entries.find((e) => e.scope === d.scope && e.ordinal === d.ordinal) ?? null;
  const where = d.scope === "" || d.scope === undefined ? "the root scope" : `scope "${d.scope}"`;
  const differs = divergence(d.recorded, d.requested);
  const at = d.recorded ? ` ("${d.scope ? `${d.scope}/` : ""}${d.recorded.name}")` : "";
  const fixes: string[] = [];
  if (d.recorded && d.requested && d.recorded.name !== d.requested.name)
    fixes.push(`restore the step's old name "${d.recorded.name}" if it was renamed`);
  if (d.recorded) fixes.push(`put ctx.removed("${d.recorded.name}") where it stood if it was removed`);
  fixes.push(`or register the change as workflow version ${info.version + 1} so this run keeps its code`);
  const unreachable = rollback?.unreachable ?? (rollback?.step ? [rollback.step] : []);
  const handlers = unreachable.length
    ? `the handler${unreachable.length === 1 ? "" : "s"} of ${listed(unreachable.map((p) => `"${p}"`))}`
    : "the remaining handlers";
  const undone = rollback?.undone ?? 0;
  const total = rollback?.total ?? 0;
  const done = undone === 0 ? "nothing is undone yet" : `${undone} of ${total} steps are undone`;
  const evidence: Evidence[] = [
    {
      kind: "drift",
      fact: `entry #${d.ordinal + 1} of ${where}: ${differs}`,
      ...(entry ? { entry: entry.id } : {}),
    },
    {
      kind: "rollback",
      fact: `the rollback could not run ${handlers}: the code no longer reaches ${unreachable.length === 1 ? "that step" : "those steps"}, so ${unreachable.length === 1 ? "its handler is" : "their handlers are"} unknown; it stopped there rather than skip ${unreachable.length === 1 ? "it" : "them"}`,
      ref: "run",
    },
    {
      kind: "version",
      fact: `the run is pinned to version ${info.version} of "${info.workflow}"`,
      ref: "run",
    },
    { kind: "fix", fact: `to put the code back on this run's recorded path: ${fixes.join("; ")}` },
  ];
  return {
    category: "code-drift",
    culprit: entry ? culpritOf(entry) : null,
    summary: `The deployed code no longer matches this run's history: it diverged at entry #${d.ordinal + 1} of ${where}${at}: ${differs}. The run then rolled back, but the rollback could not run ${handlers} because the code no longer reaches ${unreachable.length === 1 ? "it" : "them"}; ${done}. Put the code back on the recorded path (${fixes.join("; ")}), deploy, then replay_run: the replay continues the remaining handlers, never those that finished.`,
    evidence,
    nextActions: [
      person(
        `Change the code back so that ${where} asks for ${d.recorded ? entryPhrase(d.recorded) : "nothing more"} at entry #${d.ordinal + 1} again (${fixes.join("; ")}) and deploy it.`,
      ),
      ...replayActions(
        facts.address,
        null,
        "the run once the code is back: it runs the remaining rollback handlers",
      ),
    ],
    failure: runFailureKey(info),
  };
}

function workflowError(facts: RunFacts, failedEntry: HistoryEntry | null): Finding {
  const { info } = facts;
  const error = causeOf(info.error);
  const frame = topUserFrame(error?.stack);
  const last = [...facts.entries].reverse().find((e) => e.status === "completed" && e.scope === "");
  const evidence: Evidence[] = [
    {
      kind: "error",
      fact: errorLine(error, 220) ?? "no error recorded",
      ref: "run",
      ...(failedEntry ? { entry: failedEntry.id } : {}),
    },
  ];
  if (frame) evidence.push({ kind: "frame", fact: `thrown at ${frameText(frame)}`, ref: "run" });
  if (last)
    evidence.push({ kind: "after", fact: `thrown after entry "${last.path}" completed`, entry: last.id });
  if (info.input !== null)
    evidence.push({ kind: "input", fact: `run input ${brief(info.input, 160)}`, ref: "run" });
  const msg = cut(error?.message ?? "unknown error", 160);
  const place = failedEntry ? ` in "${failedEntry.path}"` : " outside any step";
  return {
    category: "workflow-error",
    culprit: failedEntry ? culpritOf(failedEntry) : null,
    summary: `The workflow code threw ${error?.name ?? "Error"}${place}${last ? ` after "${last.path}"` : ""}: ${msg}${frame ? ` (${frameText(frame)})` : ""}. Fix the code, deploy, then replay the run: it keeps its completed steps and reruns the code over them.`,
    evidence,
    nextActions: [
      person(
        `Fix the workflow code${frame ? ` at ${frameText(frame)}` : ""} (${error?.name ?? "Error"}: ${msg}) and deploy it.`,
      ),
      ...replayActions(facts.address, null, "the run"),
    ],
    failure: runFailureKey(info, facts.entries),
  };
}
