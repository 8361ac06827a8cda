// The deploy check: every unfinished run's history replayed against the code now registered, before the runs
// wake up and find out. Used by `waymark check` (CI) and, in the background, after registry.start().
//
// IMPORTANT: it reads only. Runs are read a batch at a time (memory stays bounded by the batch), their checks
// run side by side within a batch (one awaiting its own I/O costs the batch at most the check's limit), and
// nothing is written: each check runs in a verify execution whose core refuses writes (replay-check.ts).

import { setMaxListeners } from "node:events";
import type { HistoryDivergedError } from "../errors.js";
import type { RunRow, RunStatus, Store } from "../storage/store.js";
import type { Clock } from "./clock.js";
import type { Definitions } from "./definitions.js";
import { asEntries } from "./entries.js";
import { checkAgainstCode } from "./replay-check.js";

/** Statuses of a run that will execute again. */
export const UNFINISHED: RunStatus[] = [
  "pending",
  "running",
  "sleeping",
  "waiting",
  "retrying",
  "rolling-back",
];

/** One entry as history holds it or as the code asks for it. */
export interface EntryRef {
  kind: string;
  name: string;
}

/** An unfinished run that would fail when it next runs, and why. */
export interface DriftFinding {
  /** "diverged": its code no longer matches its history; "version-missing": its version is not registered. */
  problem: "diverged" | "version-missing";
  run: string;
  runId: number;
  status: RunStatus;
  version: number;
  /** The first differing entry: its scope, its position there (1-based), what history holds and the code asks. */
  entry: {
    scope: string;
    position: number;
    path: string | null;
    recorded: EntryRef | null;
    requested: EntryRef | null;
  } | null;
  /** What is wrong and how to fix it. */
  message: string;
}

/** What a deploy check found. */
export interface DriftReport {
  /** Unfinished runs of the registry's workflows replayed by the check (not those in `resumed`). */
  checked: number;
  /**
   * Unfinished runs not replayed by the check because an execution in this process resumed them (the option
   * `resumed`): it replays the same history against the same code, and a divergence fails the run with
   * HISTORY_DIVERGED (its "failed" run event and error) rather than a warning. One that ended before the check
   * listed it is not counted (it is no longer unfinished). Always 0 for `waymark check`.
   */
  resumed: number;
  /** Runs that would fail when they next run. */
  findings: DriftFinding[];
  /** Runs whose code awaited something of its own past the check's limit: not known either way. */
  unfinished: string[];
  /** Unfinished runs of workflows the registry does not hold: not checked, and no process with it runs them. */
  unregistered: Array<{ workflow: string; count: number }>;
  /** True when the check was stopped (the engine closed) before it looked at every run. */
  aborted: boolean;
}

export interface DriftCheckOptions {
  clock: Clock;
  /** Runs read and checked at once (default 100). */
  batch?: number;
  /** Longest wait for one run's code awaiting its own I/O, on the clock (default: the check's 3 s). */
  limitMs?: number;
  signal?: AbortSignal;
  /** Runs an execution in this process has begun (so has replayed or is replaying): skipped, counted in `resumed`. */
  resumed?: ReadonlySet<number>;
  /** Told of each finding as it is found. */
  onFinding?: (finding: DriftFinding) => void;
  /** Called between batches (the engine yields to its own work there). */
  between?: () => Promise<void>;
}

/** Replays every unfinished run of the registry's workflows against the code registered for its version. */
export async function checkUnfinishedRuns(
  store: Store,
  defs: Definitions,
  options: DriftCheckOptions,
): Promise<DriftReport> {
  // One listener on the caller's signal; the checks of a batch (a hundred at once) listen to this one.
  const inner = new AbortController();
  setMaxListeners(0, inner.signal);
  const onAbort = () => inner.abort();
  options.signal?.addEventListener("abort", onAbort, { once: true });
  if (options.signal?.aborted) inner.abort();
  try {
    return await checkAll(store, defs, { ...options, signal: inner.signal });
  } finally {
    options.signal?.removeEventListener("abort", onAbort);
  }
}

async function checkAll(store: Store, defs: Definitions, options: DriftCheckOptions): Promise<DriftReport> {
  const report: DriftReport = {
    checked: 0,
    resumed: 0,
    findings: [],
    unfinished: [],
    unregistered: [],
    aborted: false,
  };
  const others = new Map<string, number>();
  for (const c of await store.countRuns()) {
    if (!defs.has(c.workflow) && UNFINISHED.includes(c.status))
      others.set(c.workflow, (others.get(c.workflow) ?? 0) + c.count);
  }
  report.unregistered = [...others].sort().map(([workflow, count]) => ({ workflow, count }));
  const batch = options.batch ?? 100;
  const stopped = () => options.signal?.aborted === true;
  const resumedHere = (id: number) => options.resumed?.has(id) === true;
  for (const workflow of [...defs.keys()].sort()) {
    let before: { createdAt: number; id: number } | undefined;
    for (;;) {
      if (stopped()) return { ...report, aborted: true };
      const rows = await store.listRuns({
        workflow,
        status: UNFINISHED,
        limit: batch,
        ...(before ? { before } : {}),
      });
      if (rows.length === 0) break;
      const last = rows.at(-1)!;
      before = { createdAt: last.createdAt, id: last.id };
      if (stopped()) return { ...report, aborted: true };
      // Runs resumed here are left out before they are read, and again after, for those resumed meanwhile.
      const ids = rows.map((r) => r.id).filter((id) => !resumedHere(id));
      report.resumed += rows.length - ids.length;
      const loaded = [];
      for (const l of ids.length ? await store.loadRuns(ids) : []) {
        if (resumedHere(l.run.id)) report.resumed++;
        else loaded.push(l);
      }
      const found = await Promise.all(loaded.map((l) => checkOne(defs, l.run, l.entries, options)));
      for (const [i, f] of found.entries()) {
        report.checked++;
        if (f === "unfinished") report.unfinished.push(label(loaded[i]!.run));
        else if (f) {
          report.findings.push(f);
          options.onFinding?.(f);
        }
      }
      if (rows.length < batch) break;
      await options.between?.();
    }
  }
  if (stopped()) report.aborted = true;
  return report;
}

function label(run: RunRow): string {
  return `${run.workflow}/${run.key}`;
}

/** One run's check: a finding, null when it matches, "unfinished" when its code did not get through. */
async function checkOne(
  defs: Definitions,
  run: RunRow,
  entries: Parameters<typeof asEntries>[0],
  options: DriftCheckOptions,
): Promise<DriftFinding | null | "unfinished"> {
  const base = { run: label(run), runId: run.id, status: run.status, version: run.version };
  const versions = defs.get(run.workflow)!;
  const def = versions.get(run.version);
  if (!def) {
    return {
      ...base,
      problem: "version-missing",
      entry: null,
      message: `Run "${base.run}" is on version ${run.version} of workflow "${run.workflow}", which this registry lacks (it has ${[...versions.keys()].join(", ")}), so the engine refuses to start. To fix: keep version ${run.version} registered beside the new one (setup({ use: { ${run.workflow}: [v${run.version}, ...] } })) until its runs finish, or cancel the run.`,
    };
  }
  const outcome = await checkAgainstCode({
    clock: options.clock,
    def,
    run,
    entries: asEntries(entries),
    state: run.state,
    ...(options.limitMs !== undefined ? { limitMs: options.limitMs } : {}),
    ...(options.signal ? { signal: options.signal } : {}),
  });
  if (outcome.result === "matches") return null;
  if (outcome.result === "unfinished") return "unfinished";
  return { ...base, problem: "diverged", entry: entryOf(outcome.error), message: outcome.error.message };
}

function entryOf(error: HistoryDivergedError): DriftFinding["entry"] {
  const d = error.details as {
    scope: string;
    ordinal: number;
    recorded: EntryRef | null;
    requested: EntryRef | null;
  };
  const path = d.recorded ? (d.scope === "" ? d.recorded.name : `${d.scope}/${d.recorded.name}`) : null;
  return { scope: d.scope, position: d.ordinal + 1, path, recorded: d.recorded, requested: d.requested };
}
