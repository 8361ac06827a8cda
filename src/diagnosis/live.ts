// Runs that have not failed: stalled (owner gone), a retry storm, a sleep far in the future, cancelled,
// or healthy with what it does now.

import type { HistoryEntry } from "../engine/views.js";
import { deadLocalPid } from "../local-process.js";
import { call, person, replayActions } from "./actions.js";
import { causeKind, failedAttempts, latestError, stepEvidence } from "./attempts.js";
import { culpritOf, entryAt, type Finding, type RunFacts } from "./facts.js";
import { brief, cut, errorLine, iso, plural, span } from "./format.js";
import { normaliseMessage, retryFailureKey } from "./signatures.js";
import type { Evidence } from "./types.js";

const LIVE = ["pending", "running", "sleeping", "waiting", "retrying", "rolling-back"];

/** The entry a live run is at: the latest unfinished one, else the latest. */
function currentEntry(facts: RunFacts): HistoryEntry | null {
  const open = facts.entries.filter((e) => e.endedAt === null && e.kind === "step");
  return (
    open.at(-1) ?? facts.entries.filter((e) => e.endedAt === null).at(-1) ?? facts.entries.at(-1) ?? null
  );
}

/** A stalled run: owned by a process whose lease expired, or due and claimed by nobody. Null otherwise. */
export async function diagnoseStalled(facts: RunFacts): Promise<Finding | null> {
  const { info, now, engine } = facts;
  if (!LIVE.includes(info.status)) return null;
  const row = await engine.runRow(info.id);
  const deadPid = row.owner !== null ? deadLocalPid(row.owner) : null;
  const expired = row.owner !== null && row.leaseUntil !== null && row.leaseUntil <= now;
  const leaseGone = expired || deadPid !== null;
  const overdue = row.owner === null && row.wakeAt !== null && row.wakeAt <= now - facts.options.overdueMs;
  if (!(leaseGone && (info.status === "running" || info.status === "pending")) && !overdue) return null;
  const entry = currentEntry(facts);
  const evidence: Evidence[] = [];
  if (leaseGone) {
    evidence.push({
      kind: "lease",
      fact: `marked ${info.status}, owned by ${row.owner} whose lease ${expired ? `expired at ${iso(row.leaseUntil) ?? "never"} (${span(now - row.leaseUntil!)} ago)` : `runs until ${iso(row.leaseUntil) ?? "never"}, unrenewed`}`,
      ref: "run",
    });
    if (deadPid !== null)
      evidence.push({
        kind: "process",
        fact: `process ${deadPid} on this machine is not running`,
        ref: "run",
      });
  } else {
    evidence.push({
      kind: "overdue",
      fact: `${info.status} and due since ${iso(row.wakeAt) ?? "never"} (${span(now - row.wakeAt!)} ago), but no process has claimed it`,
      ref: "run",
    });
  }
  const live = (await engine.store.owners()).filter((o) => o.leaseUntil > now);
  evidence.push({
    kind: "owners",
    fact: live.length
      ? `${plural(live.length, "process")} hold live leases on this database`
      : "no process holds a live lease on this database",
    ref: "run",
  });
  const attempt = entry?.attempts?.at(-1);
  if (entry && attempt && attempt.endedAt === undefined) {
    evidence.push({
      kind: "attempt",
      fact: `"${entry.path}" attempt #${attempt.n} started at ${iso(attempt.startedAt)} and never ended`,
      entry: entry.id,
      attempt: attempt.n,
    });
  }
  const at = entry ? ` at "${entry.path}"` : "";
  return {
    category: "stalled",
    culprit: entry ? culpritOf(entry) : null,
    summary: leaseGone
      ? `The run is marked ${info.status}${at}, but ${expired ? `the process that owned it stopped renewing its lease ${span(now - row.leaseUntil!)} ago` : `the process that owned it (pid ${deadPid} on this machine) no longer exists`}, so nothing executes it. Start the application that runs "${info.workflow}": it takes the run over and reruns the interrupted work.`
      : `The run has been due for ${span(now - row.wakeAt!)}${at} but no process claims it. Start the application that runs "${info.workflow}" (with this version, ${info.version}) on this database.`,
    evidence,
    nextActions: [
      person(
        `Start the application that runs workflow "${info.workflow}" version ${info.version} on this database.`,
      ),
      call(
        "wait_for_run",
        { ...facts.address, until: "finished" },
        "follow the run once a process takes it over",
      ),
    ],
    failure: null,
  };
}

/** A retrying run: a storm once enough attempts failed, else healthy. */
export async function diagnoseRetrying(facts: RunFacts): Promise<Finding> {
  const wait = facts.info.waiting?.find((w) => w.kind === "retry");
  const entry = wait ? entryAt(facts, wait.entry) : undefined;
  if (!wait || !entry) return healthy(facts);
  const failed = failedAttempts(entry);
  const error = latestError(entry);
  const next = `attempt #${(entry.attempts?.length ?? 0) + 1} is due at ${iso(wait.until) ?? "never"} (in ${span((wait.until ?? facts.now) - facts.now)})`;
  const evidence = await stepEvidence(facts, entry, { maxAttempts: 3, data: false });
  evidence.splice(1, 0, { kind: "next", fact: next, entry: entry.id });
  const counts = new Map<string, number>();
  for (const a of failed) {
    const k = normaliseMessage(`${a.error!.name}: ${a.error!.message}`);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  evidence.push({
    kind: "errors",
    fact:
      counts.size === 1
        ? `the same error on all ${plural(failed.length, "failed attempt")}`
        : `errors: ${[...counts].map(([k, n]) => `${n}× ${cut(k, 60)}`).join("; ")}`,
    entry: entry.id,
  });
  if (failed.length < facts.options.stormAfterAttempts) {
    return {
      category: "healthy",
      culprit: culpritOf(entry),
      summary: `Step "${entry.path}" failed ${plural(failed.length, "time")} (${errorLine(error, 120) ?? "no error recorded"}) and retries on its own: ${next}. Nothing needs doing unless it keeps failing.`,
      evidence,
      nextActions: [call("wait_for_run", { ...facts.address, until: "finished" }, "follow the retries")],
      failure: retryFailureKey(facts.info.workflow, entry),
    };
  }
  const kind = causeKind(error);
  return {
    category: "retry-storm",
    culprit: culpritOf(entry),
    summary: `Step "${entry.path}" has failed ${plural(failed.length, "attempt")} in a row (latest: ${errorLine(error, 120) ?? "no error recorded"}) and retries at ${iso(wait.until) ?? "never"}. ${kind === "outside" ? "It recovers by itself once the service works again; replay from the step to retry at once." : "Fix the cause, then replay from the step to retry at once."}`,
    evidence,
    nextActions: [
      person(
        kind === "outside"
          ? `Make sure the service behind "${entry.path}" works again (see the error above).`
          : `Fix the cause of ${errorLine(error, 120) ?? "no error recorded"} in step "${entry.path}".`,
      ),
      ...replayActions(facts.address, entry.path, `from "${entry.path}" to retry it now`),
    ],
    failure: retryFailureKey(facts.info.workflow, entry),
  };
}

/** A sleeping run: far in the future, or healthy. */
export function diagnoseSleeping(facts: RunFacts): Finding {
  const sleeps = (facts.info.waiting ?? []).filter((w) => w.kind === "sleep" && w.until !== null);
  const far = sleeps.find((w) => w.until! - facts.now > facts.options.farSleepMs);
  const entry = far ? entryAt(facts, far.entry) : undefined;
  if (!far || !entry) return healthy(facts);
  const ahead = far.until! - facts.now;
  const evidence: Evidence[] = [
    {
      kind: "sleep",
      fact: `"${far.entry}" sleeps until ${iso(far.until) ?? "never"}, ${span(ahead)} from now`,
      entry: entry.id,
    },
  ];
  if (entry.startedAt !== null)
    evidence.push({
      kind: "set",
      fact: `the sleep was set at ${iso(entry.startedAt)} for ${span(far.until! - entry.startedAt)}`,
      entry: entry.id,
    });
  if (ahead > 365 * 86_400_000)
    evidence.push({
      kind: "units",
      fact: "a wait this long usually comes from a unit mistake (seconds read as milliseconds, or a time multiplied by 1000 twice)",
    });
  return {
    category: "sleeping-far",
    culprit: culpritOf(entry),
    summary: `The run sleeps at "${far.entry}" until ${iso(far.until) ?? "never"}, ${span(ahead)} from now. If that is not intended, fix the duration in the code and replay from "${far.entry}"; otherwise it wakes by itself.`,
    evidence,
    nextActions: [
      person(
        `If "${far.entry}" should end sooner, fix its duration or time in the workflow code and deploy it.`,
      ),
      ...replayActions(facts.address, far.entry, `from "${far.entry}" so the sleep is set again`),
    ],
    failure: null,
  };
}

/** A cancelled run: when, the entry it cut short, and how to run it again. */
export async function diagnoseCancelled(facts: RunFacts): Promise<Finding> {
  const { info, engine } = facts;
  const stopped =
    facts.entries.filter((e) => e.status === "cancelled").sort((a, b) => a.id - b.id)[0] ?? null;
  const at = info.finishedAt ?? info.updatedAt;
  const evidence: Evidence[] = [{ kind: "cancelled", fact: `cancelled at ${iso(at)}`, ref: "run" }];
  if (stopped)
    evidence.push({
      kind: "cut-short",
      fact: `it cut short "${stopped.path}" (${stopped.kind}, started ${iso(stopped.startedAt) ?? "never"})`,
      entry: stopped.id,
    });
  const pending = (await engine.store.pendingRequests([info.id], 10)).filter((r) => r.kind === "cancel");
  const by = (info.error?.details as { by?: unknown } | undefined)?.by;
  evidence.push({
    kind: "by",
    fact: pending.length
      ? `cancel request #${pending[0]!.id} from another process (${iso(pending[0]!.createdAt)}) is still pending`
      : typeof by === "string"
        ? `cancelled by ${by}`
        : "the run does not record who cancelled it",
    ref: pending.length ? `request #${pending[0]!.id}` : "run",
  });
  return {
    category: "cancelled",
    culprit: stopped ? culpritOf(stopped) : null,
    summary: `The run was cancelled at ${iso(at)}${stopped ? ` while at "${stopped.path}"` : ""}; its history is kept. If it should go on, replay it: it resumes ${stopped ? `from "${stopped.path}"` : "where it stopped"}.`,
    evidence,
    nextActions: [
      person("Confirm with the user that the run should go on (someone cancelled it on purpose)."),
      ...replayActions(facts.address, null, "the run from the entry the cancel cut short"),
    ],
    failure: null,
  };
}

/** Nothing wrong: what the run is doing now. */
export function healthy(facts: RunFacts): Finding {
  const { info, now } = facts;
  const entry = currentEntry(facts);
  const at = entry ? ` at "${entry.path}"` : "";
  const evidence: Evidence[] = [];
  let summary: string;
  if (info.status === "completed") {
    summary = `The run completed at ${iso(info.finishedAt) ?? "never"} after ${plural(facts.entries.length, "entry")}, with output ${brief(info.output, 100)}. Nothing is wrong.`;
  } else if (info.status === "sleeping") {
    const w = info.waiting?.find((x) => x.kind === "sleep");
    summary = `The run sleeps${w ? ` at "${w.entry}" until ${iso(w.until) ?? "never"} (in ${span((w.until ?? now) - now)})` : ""}. Nothing is wrong; it wakes by itself.`;
  } else if (info.owner && (info.leaseUntil ?? 0) > now) {
    summary = `The run is executing now${at}, in process ${info.owner}. Nothing is wrong.`;
    evidence.push({
      kind: "lease",
      fact: `leased by ${info.owner} until ${iso(info.leaseUntil) ?? "never"}`,
      ref: "run",
    });
  } else {
    summary = `The run is ${info.status}${at} and about to be picked up. Nothing is wrong.`;
  }
  if (entry)
    evidence.push({
      kind: "at",
      fact: `latest entry "${entry.path}" (${entry.kind}, ${entry.status})`,
      entry: entry.id,
    });
  return {
    category: "healthy",
    culprit: entry ? culpritOf(entry) : null,
    summary,
    evidence,
    nextActions:
      info.status === "completed"
        ? [call("get_history", facts.address, "read what each step did")]
        : [call("wait_for_run", { ...facts.address, until: "finished" }, "follow it to its end")],
    failure: null,
  };
}
