// Evidence from a sibling: when a run of the same workflow and version completed, what it had that this run
// lacks (input, outputs of the steps before the culprit, where the histories part). One index probe finds it.

import { call } from "./actions.js";
import { compareRuns } from "./compare.js";
import type { RunComparison, ValueChange } from "./compare-types.js";
import type { Finding, RunFacts } from "./facts.js";
import { brief, cut } from "./format.js";
import { dotted } from "./pointer-diff.js";
import type { Evidence, NextAction } from "./types.js";

/** Sibling facts a diagnosis shows at most (the rest: compare_runs). */
const MAX_FACTS = 4;

/** "set (\"ann@example.com\"); here it is null", "= 5; here it is 7", "no value; here it is 3". */
function contrast(path: string, c: ValueChange): string {
  const name = cut(path, 200);
  const there = "other" in c ? c.other : undefined;
  const here = "run" in c ? brief(c.run, 80) : "absent";
  if (there === undefined) return `had no ${name}; here it is ${here}`;
  if (here === "absent" || c.run === null) return `had ${name} set (${brief(there, 80)}); here it is ${here}`;
  return `had ${name} = ${brief(there, 80)}; here it is ${here}`;
}

/** The facts a comparison with a completed sibling adds to a diagnosis, most telling first. */
export function siblingFacts(c: RunComparison, culpritPath: string | null): Evidence[] {
  const who = `The latest completed run of ${c.other.workflow} v${c.other.version} (${c.other.workflow}/${c.other.key})`;
  const ref = `run ${c.other.workflow}/${c.other.key}`;
  const out: Evidence[] = [];
  for (const change of c.input.changes.slice(0, 2))
    out.push({ kind: "sibling", fact: `${who} ${contrast(dotted("input", change.pointer), change)}.`, ref });
  if (c.input.total > 2)
    out.push({
      kind: "sibling",
      fact: `Its input differs from this run's at ${c.input.more ? "more than " : ""}${c.input.total} places in all.`,
      ref,
    });
  for (const o of c.outputs.differing.slice(0, 2)) {
    const change = o.diff.changes[0]!;
    const name = `"${cut(o.path, 200)}" ${dotted("output", change.pointer)}`;
    out.push({ kind: "sibling", fact: `${who} ${contrast(name, change)}.`, entry: o.run, ref });
  }
  const f = c.firstDifference;
  if (f && f.path !== culpritPath)
    out.push({
      kind: "sibling",
      fact: `${who} parts from this run at "${cut(f.path, 200)}": here ${f.run ? `${f.run.kind} ${f.run.status}` : "no such entry"}, there ${f.other ? `${f.other.kind} ${f.other.status}` : "no such entry"}.`,
      ...(f.run ? { entry: f.run.id } : {}),
      ref,
    });
  return out.slice(0, MAX_FACTS);
}

/**
 * The sibling evidence and a compare_runs call for a run in trouble, when another run of its workflow and
 * version completed; null when none did (or the run is healthy or completed itself).
 */
export async function siblingEvidence(
  facts: RunFacts,
  finding: Finding,
): Promise<{ evidence: Evidence[]; action: NextAction } | null> {
  if (finding.category === "healthy" || facts.info.status === "completed") return null;
  const sibling = await facts.engine.store.latestCompletedRun(
    facts.info.workflow,
    facts.info.version,
    facts.info.id,
  );
  if (!sibling) return null;
  const c = await compareRuns(facts.engine, facts.info.id, sibling.id);
  if (c.other === null) return null;
  return {
    evidence: siblingFacts(c, finding.culprit?.path ?? null),
    action: call(
      "compare_runs",
      { ...facts.address, otherKey: sibling.key },
      `everything that differs from ${sibling.workflow}/${sibling.key}, which completed`,
    ),
  };
}
