// compareRuns(engine, run, other?): a run against another run, by default the latest completed run of the
// same workflow and version (one index probe, Store.latestCompletedRun). Reads only.

import type { Engine } from "../engine/engine.js";
import { fromJson } from "../engine/json.js";
import { entryDetail } from "../engine/state-history.js";
import { type HistoryEntry, toHistoryEntry } from "../engine/views.js";
import { InvalidInputError } from "../errors.js";
import type { EntryRow, RunRow } from "../storage/store.js";
import {
  firstDifference,
  outputDifferences,
  type Side,
  timingOutliers,
  valueDiff,
} from "./compare-histories.js";
import type { ComparedRun, NoComparison, RunComparison } from "./compare-types.js";
import { REPLAY_SCOPE } from "./facts.js";

interface Loaded extends Side {
  row: RunRow;
  summary: ComparedRun;
}

/** A run's entries (replay markers left out) and its state before any of them, loaded once. */
async function load(engine: Engine, row: RunRow): Promise<Loaded> {
  const rows: EntryRow[] = await engine.store.allEntries(row.id);
  const entries: HistoryEntry[] = rows.filter((r) => r.scope !== REPLAY_SCOPE).map(toHistoryEntry);
  return {
    row,
    entries,
    stateBefore: (e) => (e ? entryDetail(row, rows, e.id).stateBefore : fromJson(row.state)),
    summary: summaryOf(row, entries.length),
  };
}

function summaryOf(row: RunRow, entries: number): ComparedRun {
  return {
    id: row.id,
    workflow: row.workflow,
    key: row.key,
    status: row.status,
    version: row.version,
    createdAt: row.createdAt,
    finishedAt: row.finishedAt,
    entries,
  };
}

/** The latest completed run on each other version of the workflow that has one, newest version first. */
async function otherVersions(engine: Engine, row: RunRow): Promise<NoComparison["otherVersions"]> {
  const summary = (await engine.listWorkflows()).find((w) => w.name === row.workflow);
  const versions = Object.entries(summary?.runsByVersion ?? {})
    .filter(([v, counts]) => Number(v) !== row.version && (counts.completed ?? 0) > 0)
    .map(([v]) => Number(v))
    .sort((a, b) => b - a)
    .slice(0, 3);
  const out: NoComparison["otherVersions"] = [];
  for (const v of versions) {
    const sibling = await engine.store.latestCompletedRun(row.workflow, v, row.id);
    if (sibling) out.push({ key: sibling.key, version: v, finishedAt: sibling.finishedAt });
  }
  return out;
}

/** The run diagnose_run and compare_runs compare with by default: the latest completed one of the same version. */
export function defaultOther(engine: Engine, row: RunRow): Promise<RunRow | undefined> {
  return engine.store.latestCompletedRun(row.workflow, row.version, row.id);
}

/**
 * Compares run `runId` with run `otherId`, or with the latest completed run of its workflow and version
 * when none is given (a NoComparison, saying so, when there is none).
 */
export async function compareRuns(
  engine: Engine,
  runId: number,
  otherId?: number,
): Promise<RunComparison | NoComparison> {
  const row = await engine.runRow(runId);
  if (otherId === runId) {
    throw new InvalidInputError(
      `compareRuns got run "${row.workflow}/${row.key}" twice: compare it with another run, or leave the other out to compare with the latest completed run of ${row.workflow} v${row.version}.`,
      { run: `${row.workflow}/${row.key}` },
    );
  }
  const otherRow = otherId !== undefined ? await engine.runRow(otherId) : await defaultOther(engine, row);
  if (!otherRow) {
    return {
      run: summaryOf(row, (await load(engine, row)).entries.length),
      other: null,
      reason: `No other run of ${row.workflow} v${row.version} has completed, so there is nothing to compare "${row.workflow}/${row.key}" with by default.`,
      otherVersions: await otherVersions(engine, row),
    };
  }
  return compareLoaded(await load(engine, row), await load(engine, otherRow), otherId !== undefined);
}

function compareLoaded(run: Loaded, other: Loaded, given: boolean): RunComparison {
  return {
    run: run.summary,
    other: other.summary,
    otherChosen: given ? "given" : "latest-completed",
    versions: {
      run: run.row.version,
      other: other.row.version,
      differ: run.row.version !== other.row.version,
    },
    firstDifference: firstDifference(run, other),
    input: valueDiff(fromJson(run.row.input), fromJson(other.row.input)),
    outputs: outputDifferences(run, other),
    timing: timingOutliers(run, other),
  };
}
