// What a diagnosis reads about a run, loaded once: the run, its history, the time, and the options.

import type { Engine } from "../engine/engine.js";
import type { HistoryEntry, RunInfo } from "../engine/views.js";
import type { FailureKey } from "./signatures.js";
import {
  type Category,
  type Culprit,
  DEFAULTS,
  type DiagnoseOptions,
  type Evidence,
  type NextAction,
} from "./types.js";

/** Replay markers live in this scope; they are not the workflow's own entries. */
export const REPLAY_SCOPE = "~replay";

/** Everything the category rules look at. */
export interface RunFacts {
  engine: Engine;
  info: RunInfo;
  /** The workflow's own entries, in the order first recorded. */
  entries: HistoryEntry[];
  /** Replay markers (scope "~replay"), oldest first. */
  replays: HistoryEntry[];
  /** The engine clock's time when the diagnosis began. */
  now: number;
  options: Required<DiagnoseOptions>;
  /** `{ workflow, key }`, the address every tool call takes. */
  address: { workflow: string; key: string };
}

/** Loads a run's facts; reads only (nothing is written). */
export async function gatherFacts(
  engine: Engine,
  runId: number,
  options: DiagnoseOptions,
): Promise<RunFacts> {
  const info = await engine.info(runId);
  const all: HistoryEntry[] = [];
  for (let after = 0; ; ) {
    const page = await engine.history(runId, { after, limit: 10_000 });
    all.push(...page);
    if (page.length < 10_000) break;
    after = page.at(-1)!.id;
  }
  return {
    engine,
    info,
    entries: all.filter((e) => e.scope !== REPLAY_SCOPE),
    replays: all.filter((e) => e.scope === REPLAY_SCOPE),
    now: engine.clock.now(),
    options: { ...DEFAULTS, ...stripUndefined(options) },
    address: { workflow: info.workflow, key: info.key },
  };
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/** The culprit record of an entry. */
export function culpritOf(e: HistoryEntry): Culprit {
  return { id: e.id, name: e.name, path: e.path, scope: e.scope, kind: e.kind };
}

/** The entry at a path, if any. */
export function entryAt(facts: RunFacts, path: string): HistoryEntry | undefined {
  return facts.entries.find((e) => e.path === path);
}

export { innermostFailed } from "../failure-signature.js";

/** What one category rule concludes; the diagnosis adds the run and similar failures. */
export interface Finding {
  category: Category;
  culprit: Culprit | null;
  summary: string;
  evidence: Evidence[];
  nextActions: NextAction[];
  /** What similar runs are matched on, for failures (null when the category is no failure). */
  failure: FailureKey | null;
}
