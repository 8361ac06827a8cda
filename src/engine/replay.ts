// Replay after a fix: discard an entry and everything recorded after it, restore state and messages,
// and resume on the latest (or a chosen) version. Three parts: the plan (replay-plan.ts, pure: what is
// discarded, reopened, kept, restored), the check (replay-check.ts: the new code over the kept history),
// and the apply here (the plan written in one batch, with a `replay` entry in scope "~replay" recording
// who asked, when, from where, and what was discarded).

import { isErrorCode, NoCodeError, RemoteError, ReplayError, RunBusyError } from "../errors.js";
import type { RunRow } from "../storage/store.js";
import type { Engine } from "./engine.js";
import {
  asEntry,
  attemptsOf,
  detailOf,
  type EntryOf,
  entryPath,
  type ReplayDetail,
  ROLLBACK_SCOPE,
} from "./entries.js";
import type { ErrorInfo } from "./error-info.js";
import { checkAgainstCode } from "./replay-check.js";
import {
  type PlannedReplay,
  planReplay,
  REPLAY_SCOPE,
  type ReplayPlan,
  replayVersion,
} from "./replay-plan.js";

import type { ReplayOptions, ReplayRequest } from "./replay-types.js";

export type { ReplayOptions, ReplayPlan, ReplayRequest } from "./replay-types.js";

/** Works out (and, unless dry, applies) a replay of one run: plan, check, apply. */
export async function replayRun(
  engine: Engine,
  runId: number,
  options: ReplayOptions = {},
): Promise<ReplayPlan> {
  engine.assertOpen();
  const run = await engine.runRow(runId);
  const label = `${run.workflow}/${run.key}`;
  if (
    engine.active.has(runId) ||
    (run.owner && run.owner !== engine.owner && (run.leaseUntil ?? 0) > engine.clock.now())
  ) {
    throw new RunBusyError(label, "be replayed");
  }
  // Without the code (an attached process) only a dry run is possible here, and it cannot check the code.
  const versions = engine.defs.get(run.workflow);
  if (!versions && !options.dryRun) {
    throw new NoCodeError(
      `This process has no code for workflow "${run.workflow}", so it cannot replay "${label}" itself; use engine.replay, which asks the process that runs it.`,
      { run: label },
    );
  }
  const known = versions
    ? [...versions.keys()]
    : [...(await engine.published()).values()].filter((p) => p.name === run.workflow).map((p) => p.version);
  const to = replayVersion(run, known, options.version);
  const planned = planReplay({
    run,
    entries: await engine.store.allEntries(runId),
    messages: await engine.store.listMessages(runId, { includeConsumed: true, limit: 100_000 }),
    fromStep: options.fromStep,
    version: to,
  });

  // The kept history, with reopened containers, must match the code that will run.
  const def = versions?.get(to);
  let checked = false;
  if (def) {
    const outcome = await checkAgainstCode({
      clock: engine.clock,
      def,
      run,
      entries: planned.kept,
      state: planned.state,
    });
    if (outcome.result === "diverged") {
      const details = outcome.error.details as { replayFrom?: string | null };
      throw new ReplayError(
        "REPLAY_DIVERGED",
        `Cannot replay "${label}" on version ${to}: the history it would keep does not match that code. ${outcome.error.message}${details.replayFrom ? ` Replay from "${details.replayFrom}" or earlier instead.` : ""}`,
        { ...details, version: to },
      );
    }
    checked = outcome.result === "matches";
  }
  const children = await discardedChildren(engine, runId, planned.plan.discard);
  const plan: ReplayPlan = {
    ...planned.plan,
    children,
    dryRun: options.dryRun === true,
    applied: false,
    checkedAgainstCode: checked,
  };
  if (options.dryRun) return plan;
  // A failed child is replayed from its failed step first; the parent then waits for it again.
  for (const c of children) {
    if (c.action !== "replay") continue;
    const child = await engine.store.findRun(c.workflow, c.key);
    if (child) await replayOrRequest(engine, child.id, { requestedBy: `parent ${label}` });
  }
  await applyReplay(engine, run, planned, options.requestedBy ?? "api");
  return { ...plan, applied: true };
}

/** The child runs of the ctx.child entries a replay discards, and what becomes of each. */
async function discardedChildren(
  engine: Engine,
  runId: number,
  discard: ReplayPlan["discard"],
): Promise<NonNullable<ReplayPlan["children"]>> {
  const out: NonNullable<ReplayPlan["children"]> = [];
  for (const d of discard) {
    if (d.kind !== "child") continue;
    const row = await engine.store.getEntry(runId, d.id);
    const detail = row ? detailOf(asEntry(row) as EntryOf<"child">) : undefined;
    if (!detail) continue;
    const child = await engine.store.findRun(detail.workflow, detail.key);
    const status = child?.status ?? "missing";
    out.push({
      entry: { id: d.id, path: d.path },
      workflow: detail.workflow,
      key: detail.key,
      status,
      action:
        status === "completed" ? "reuse" : status === "failed" || status === "cancelled" ? "replay" : "wait",
    });
  }
  return out;
}

/**
 * The cause to roll back with again when a replay starts from a rollback handler's entry of a run whose
 * rollback failed (ROLLBACK_FAILED): the run resumes rolling back (its code replays only, to learn the
 * handlers, then the remaining ones run) and ends with that cause, as a crashed rollback does. Its code does
 * not go on: a cause that history does not hold (code drift, a cancel) would otherwise be forgotten and the
 * run carry on past it. Null for any other replay.
 */
function rollbackCause(run: RunRow, from: { path: string } | null): string | null {
  if (!from?.path.startsWith(`${ROLLBACK_SCOPE}/`) || !run.error) return null;
  const error = JSON.parse(run.error) as ErrorInfo;
  const cause = error.code === "ROLLBACK_FAILED" ? error.details?.cause : undefined;
  return cause && typeof cause === "object" ? JSON.stringify(cause) : null;
}

/** Writes a plan in one batch: entries discarded and reopened, messages put back, the marker, the run reset. */
async function applyReplay(
  engine: Engine,
  run: RunRow,
  planned: PlannedReplay,
  requestedBy: string,
): Promise<void> {
  const label = `${run.workflow}/${run.key}`;
  const { plan } = planned;
  const now = engine.clock.now();
  if (!(await engine.store.claimRun(run.id, engine.owner, now + 60_000, now)))
    throw new RunBusyError(label, "be replayed");
  const w = engine.writes;
  w.deleteEntries(run.id, planned.discardSeqs);
  for (const r of planned.reopened) w.entry(r, engine.owner);
  w.unconsume(plan.restoreMessages.map((m) => m.id));
  w.entry(
    {
      runId: run.id,
      seq: planned.nextSeq,
      scope: REPLAY_SCOPE,
      ordinal: planned.markers,
      name: `replay-${planned.markers + 1}`,
      kind: "replay",
      status: "completed",
      startedAt: now,
      endedAt: now,
      input: null,
      output: null,
      error: null,
      attempts: null,
      detail: JSON.stringify({
        requestedBy,
        from: plan.from,
        previousStatus: run.status,
        previousError: run.error ? (JSON.parse(run.error) as ErrorInfo).message : null,
        version: plan.version,
        discarded: planned.discarded.slice(0, 200).map((r) => ({
          id: r.seq,
          path: entryPath(r.scope, r.name),
          kind: r.kind,
          status: r.status,
          attempts: attemptsOf(r).length,
          ...(r.error ? { error: (JSON.parse(r.error) as ErrorInfo).message } : {}),
        })),
        discardedCount: planned.discarded.length,
        restoredMessages: plan.restoreMessages.map((m) => m.id),
      } satisfies ReplayDetail),
      stateSeq: null,
      stateDiff: null,
    },
    engine.owner,
  );
  const undo = rollbackCause(run, plan.from);
  w.patch(
    {
      id: run.id,
      status: undo ? "rolling-back" : "pending",
      version: plan.version.to,
      state: planned.state,
      output: null,
      error: undo,
      failureSignature: null,
      waiting: null,
      waitQueues: null,
      waitRuns: null,
      finishedAt: null,
      updatedAt: now,
      owner: null,
      leaseUntil: null,
      wakeAt: now,
    },
    engine.owner,
  );
  const failed = await w.flush();
  if (failed.has(run.id))
    throw new ReplayError(
      "REPLAY_NOT_STORED",
      `The replay of "${label}" could not be stored; nothing changed. Try again.`,
    );
  engine.events.emit({
    type: "run",
    runId: run.id,
    workflow: run.workflow,
    key: run.key,
    status: undo ? "rolling-back" : "pending",
  });
  engine.poke();
}

/**
 * A replay from anywhere: carried out here when this process has the workflow's code; otherwise stored as
 * a request for the process that runs it, waiting up to `waitMs` for it to be carried out.
 */
export async function replayOrRequest(
  engine: Engine,
  runId: number,
  options: ReplayOptions & { waitMs?: number } = {},
): Promise<ReplayPlan | ReplayRequest> {
  engine.assertOpen();
  const run = await engine.runRow(runId);
  if (engine.defs.has(run.workflow) || options.dryRun) return replayRun(engine, runId, options);
  await replayRun(engine, runId, { ...options, dryRun: true }); // refuse bad input here, before asking
  const { waitMs, ...args } = options;
  const requestId = await engine.writes.request(
    runId,
    "replay",
    JSON.stringify({ ...args, requestedBy: args.requestedBy ?? "attached process" }),
  );
  // The owning process writes the request's result: another process's change, which the watch notices.
  const waited = await engine.watchRun(
    runId,
    async () => (await engine.store.getRequest(requestId))?.result ?? undefined,
    { timeout: waitMs ?? 5000 },
  );
  if (waited.reason === "until") {
    const result = JSON.parse(waited.value) as {
      ok: boolean;
      plan?: ReplayPlan;
      error?: string;
      code?: string;
    };
    if (result.ok && result.plan) return result.plan;
    throw new RemoteError(
      isErrorCode(result.code) ? result.code : "REPLAY_REFUSED",
      result.error ?? "The owning process refused the replay.",
      {
        run: `${run.workflow}/${run.key}`,
      },
    );
  }
  return {
    requested: true,
    requestId,
    run: `${run.workflow}/${run.key}`,
    message: `No process running workflow "${run.workflow}" has carried out the replay yet; it is stored and will be applied when one claims the run.`,
  };
}
