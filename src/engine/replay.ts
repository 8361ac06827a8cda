// Replay after a fix: discard an entry and everything recorded after it, restore state and messages,
// and resume on the latest (or a chosen) version.
//
// What is discarded (documented in the README):
// - the chosen entry and every entry first recorded after it (greater seq), in any scope: a later
//   entry of a sibling join branch is discarded too, and runs again (steps are at-least-once anyway);
// - the entries that contain the chosen one (its join, race or loop, at any depth) are kept but
//   reopened: back to running, their outcome cleared; a reopened loop restarts at the chosen
//   entry's iteration with the loop state that iteration began with;
// - the run's state goes back to what it was before the chosen entry (the discarded entries'
//   recorded changes are reverted, newest first);
// - messages consumed by discarded entries go back on their queues, in their original order;
// - a `replay` entry (scope "~replay") records who asked, when, from where, and what was discarded.

import { InvalidInputError, RunBusyError, WaymarkError } from "../errors.js";
import type { MessageRow, RunRow } from "../storage/store.js";
import type { AnyWorkflow } from "../workflow.js";
import { makeContext } from "./context.js";
import type { Engine } from "./engine.js";
import {
  asEntries,
  attemptsOf,
  type Entry,
  entryPath,
  isContainer,
  type ReplayDetail,
  reopenedContainer,
} from "./entries.js";
import type { ErrorInfo } from "./error-info.js";
import { RunExecution } from "./execution.js";
import { applyDiff, type JsonValue, revertDiff } from "./json.js";
import { changesOf } from "./state-history.js";

export interface ReplayOptions {
  /** Entry path (e.g. "calculate-tax", "notify[mail]/send") or id. Default: the failed entry. */
  fromStep?: string | number;
  /** Version to run from now on. Default: the latest registered. */
  version?: number;
  /** Show what would happen and change nothing. */
  dryRun?: boolean;
  /** Who asked (recorded in history). */
  requestedBy?: string;
}

export interface ReplayPlan {
  run: string;
  /** The entry replay starts from, or null when nothing is discarded (the code reruns over all of history). */
  from: { id: number; path: string } | null;
  discard: Array<{ id: number; path: string; kind: string; status: string }>;
  /** Containers of the chosen entry, kept but reopened. */
  reopen: Array<{ id: number; path: string; kind: string }>;
  restoreMessages: Array<{ id: number; queue: string; body: unknown; sentAt: number }>;
  restoreState: unknown;
  version: { from: number; to: number };
  dryRun: boolean;
  applied: boolean;
  /**
   * True when the new code replayed the kept history to its end without a mismatch. False when this
   * process lacks the code (the owner checks when it applies the replay), or when the code awaited
   * something of its own (a timer, I/O) for longer than the check waits (3 s) before reaching it.
   */
  checkedAgainstCode: boolean;
}

const REPLAY_SCOPE = "~replay";
/** Longest wait for the new code to replay the kept history during a replay's check. */
const VERIFY_MS = 3000;

/** The entry a replay without fromStep starts from: the innermost failed (or cancelled) entry. */
function defaultFrom(run: RunRow, rows: Entry[]): Entry | null | "refuse" {
  const label = `${run.workflow}/${run.key}`;
  const code = rows.filter((r) => r.scope !== REPLAY_SCOPE);
  if (run.status === "failed") {
    const failed = code.filter((r) => r.status === "failed");
    if (failed.length) {
      // The innermost: a failed entry no other failed entry is nested in.
      const inner = failed.filter(
        (f) => !failed.some((g) => g !== f && g.scope.startsWith(entryPath(f.scope, f.name))),
      );
      return inner.sort((a, b) => a.seq - b.seq)[0] ?? null;
    }
    const error = run.error ? (JSON.parse(run.error) as ErrorInfo) : null;
    if (error?.code === "HISTORY_DIVERGED") {
      const from = (error.details?.replayFrom as string | null) ?? null;
      throw new WaymarkError(
        "REPLAY_NEEDS_STEP",
        `Run "${label}" failed because its code no longer matches its history, so there is no failed step to retry. Replay it with fromStep${from ? ` "${from}" (the earliest entry a replay could start from)` : ""}.`,
        { run: label, replayFrom: from },
      );
    }
    return null;
  }
  if (run.status === "cancelled") {
    const cancelled = code.filter((r) => r.status === "cancelled").sort((a, b) => a.seq - b.seq);
    return cancelled[0] ?? null;
  }
  return "refuse";
}

/** Containers (join, race, loop entries) of an entry, outermost first. */
function containersOf(rows: Entry[], entry: Entry): Entry[] {
  const out: Entry[] = [];
  for (const r of rows) {
    if (!isContainer(r.kind)) continue;
    const path = entryPath(r.scope, r.name);
    if (entry.scope.startsWith(`${path}[`) || entry.scope.startsWith(`${path}#`)) out.push(r);
  }
  return out.sort((a, b) => a.scope.length - b.scope.length);
}

/** Works out (and, unless dry, applies) a replay of one run. */
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
    throw new WaymarkError(
      "NO_CODE",
      `This process has no code for workflow "${run.workflow}", so it cannot replay "${label}" itself; use engine.replay, which asks the process that runs it.`,
      { run: label },
    );
  }
  const known = versions
    ? [...versions.keys()]
    : [...(await engine.published()).values()].filter((p) => p.name === run.workflow).map((p) => p.version);
  const to = options.version ?? (known.length ? Math.max(...known) : run.version);
  if (!known.includes(to) && (versions || known.length)) {
    throw new InvalidInputError(
      `Workflow "${run.workflow}" has no version ${to}; registered versions are ${known.join(", ")}.`,
    );
  }
  const def = versions?.get(to);

  const rows = asEntries(await engine.store.allEntries(runId));
  let from: Entry | null;
  if (options.fromStep !== undefined) {
    const ref = options.fromStep;
    from =
      (typeof ref === "number"
        ? rows.find((r) => r.seq === ref)
        : rows.find((r) => entryPath(r.scope, r.name) === ref)) ?? null;
    if (!from || from.scope === REPLAY_SCOPE) {
      const names = rows.filter((r) => r.scope === "").map((r) => r.name);
      throw new InvalidInputError(
        `Run "${label}" has no entry ${JSON.stringify(ref)} to replay from. Its root entries are: ${names.join(", ") || "(none)"}. Name nested entries by path, e.g. "notify[mail]/send".`,
      );
    }
  } else {
    const chosen = defaultFrom(run, rows);
    if (chosen === "refuse") {
      throw new InvalidInputError(
        `Run "${label}" is ${run.status}; there is no failed step to retry. Pass fromStep to rerun it from an entry.`,
      );
    }
    from = chosen;
  }

  const containers = from ? containersOf(rows, from) : [];
  const containerSeqs = new Set(containers.map((c) => c.seq));
  const discarded = from
    ? rows.filter((r) => r.seq >= from.seq && !containerSeqs.has(r.seq) && r.scope !== REPLAY_SCOPE)
    : [];
  const discardSeqs = new Set(discarded.map((r) => r.seq));
  const reopened = from ? containers.map((c) => reopenedContainer(c, from)) : [];

  // State without the discarded entries' changes: revert every change from the first discarded one on,
  // newest first, then apply again those of kept entries (a join branch kept beside the replayed one
  // may have committed after it), in their order.
  const state = JSON.parse(run.state) as Record<string, JsonValue>;
  const changes = changesOf(rows);
  const firstDiscarded = changes.findIndex((c) => discardSeqs.has(c.entry));
  if (firstDiscarded >= 0) {
    const later = changes.slice(firstDiscarded);
    for (let i = later.length - 1; i >= 0; i--) revertDiff(state, later[i]!.diff);
    for (const c of later) if (!discardSeqs.has(c.entry)) applyDiff(state, c.diff);
  }
  const consumed = (await engine.store.listMessages(runId, { includeConsumed: true, limit: 100_000 })).filter(
    (m: MessageRow) => m.consumedAt !== null && m.consumedBy !== null && discardSeqs.has(m.consumedBy),
  );

  // The kept history, with reopened containers, must match the code that will run.
  const kept = rows.filter((r) => !discardSeqs.has(r.seq) && !containerSeqs.has(r.seq)).concat(reopened);
  const checked = def ? await verifyPrefix(engine, run, def, kept, JSON.stringify(state)) : false;

  const plan: ReplayPlan = {
    run: label,
    from: from ? { id: from.seq, path: entryPath(from.scope, from.name) } : null,
    discard: discarded.map((r) => ({
      id: r.seq,
      path: entryPath(r.scope, r.name),
      kind: r.kind,
      status: r.status,
    })),
    reopen: reopened.map((r) => ({ id: r.seq, path: entryPath(r.scope, r.name), kind: r.kind })),
    restoreMessages: consumed.map((m) => ({
      id: m.id,
      queue: m.queue,
      body: JSON.parse(m.body),
      sentAt: m.sentAt,
    })),
    restoreState: state,
    version: { from: run.version, to },
    dryRun: options.dryRun === true,
    applied: false,
    checkedAgainstCode: checked,
  };
  if (options.dryRun) return plan;

  const now = engine.clock.now();
  if (!(await engine.store.claimRun(runId, engine.owner, now + 60_000, now)))
    throw new RunBusyError(label, "be replayed");
  const w = engine.writes;
  w.deleteEntries(runId, [...discardSeqs]);
  for (const r of reopened) w.entry(r, engine.owner);
  w.unconsume(consumed.map((m) => m.id));
  const markers = rows.filter((r) => r.scope === REPLAY_SCOPE);
  const maxSeq = rows.reduce((m, r) => Math.max(m, r.seq), 0);
  w.entry(
    {
      runId,
      seq: maxSeq + 1,
      scope: REPLAY_SCOPE,
      ordinal: markers.length,
      name: `replay-${markers.length + 1}`,
      kind: "replay",
      status: "completed",
      startedAt: now,
      endedAt: now,
      input: null,
      output: null,
      error: null,
      attempts: null,
      detail: JSON.stringify({
        requestedBy: options.requestedBy ?? "api",
        from: plan.from,
        previousStatus: run.status,
        previousError: run.error ? (JSON.parse(run.error) as ErrorInfo).message : null,
        version: plan.version,
        discarded: discarded.slice(0, 200).map((r) => ({
          id: r.seq,
          path: entryPath(r.scope, r.name),
          kind: r.kind,
          status: r.status,
          attempts: attemptsOf(r).length,
          ...(r.error ? { error: (JSON.parse(r.error) as ErrorInfo).message } : {}),
        })),
        discardedCount: discarded.length,
        restoredMessages: plan.restoreMessages.map((m) => m.id),
      } satisfies ReplayDetail),
      stateSeq: null,
      stateDiff: null,
    },
    engine.owner,
  );
  w.patch(
    {
      id: runId,
      status: "pending",
      version: to,
      state: JSON.stringify(state),
      output: null,
      error: null,
      failureSignature: null,
      waiting: null,
      waitQueues: null,
      finishedAt: null,
      updatedAt: now,
      owner: null,
      leaseUntil: null,
      wakeAt: now,
    },
    engine.owner,
  );
  const failed = await w.flush();
  if (failed.has(runId))
    throw new WaymarkError(
      "REPLAY_NOT_STORED",
      `The replay of "${label}" could not be stored; nothing changed. Try again.`,
    );
  engine.events.emit({ type: "run", runId, workflow: run.workflow, key: run.key, status: "pending" });
  engine.poke();
  return { ...plan, applied: true };
}

/** Replays the new code over the kept history without running anything new; throws on divergence. */
async function verifyPrefix(
  engine: Engine,
  run: RunRow,
  def: AnyWorkflow,
  kept: Entry[],
  state: string,
): Promise<boolean> {
  const version = def.version;
  const exec = new RunExecution(engine, def, { ...run, version, state }, kept, [], makeContext);
  exec.verifying = true;
  exec.start();
  // Recorded values resolve in microtasks, but the code may also await its own timers or I/O between
  // steps. Wait until it ends, diverges, or has stopped at the frontier and made no call for a few turns
  // (other branches may still be on their way), up to VERIFY_MS.
  const deadline = Date.now() + VERIFY_MS;
  let calls = -1;
  let quiet = 0;
  let complete = false;
  for (let turn = 0; Date.now() < deadline; turn++) {
    await new Promise((r) => (turn < 4 ? setImmediate(r) : setTimeout(r, 2)));
    if (exec.fatal || exec.verifyOutcome) {
      complete = true;
      break;
    }
    quiet = exec.frontiers > 0 && exec.verifyCalls === calls ? quiet + 1 : 0;
    calls = exec.verifyCalls;
    if (quiet >= 3) {
      complete = true;
      break;
    }
  }
  const fatal = exec.fatal ?? (exec.verifyOutcome?.error as Error | undefined);
  exec.stop();
  if (fatal && (fatal as { code?: string }).code === "HISTORY_DIVERGED") {
    const details = (fatal as WaymarkError).details as { replayFrom?: string | null };
    throw new WaymarkError(
      "REPLAY_DIVERGED",
      `Cannot replay "${run.workflow}/${run.key}" on version ${version}: the history it would keep does not match that code. ${fatal.message}${details.replayFrom ? ` Replay from "${details.replayFrom}" or earlier instead.` : ""}`,
      { ...details, version },
    );
  }
  return complete;
}

/** A replay stored for the process that runs the workflow, not yet carried out. */
export interface ReplayRequest {
  requested: true;
  requestId: number;
  run: string;
  message: string;
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
    throw new WaymarkError(
      result.code ?? "REPLAY_REFUSED",
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
