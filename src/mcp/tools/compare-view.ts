// How compare_runs answers: the text a model reads (what differs first, then each difference), and the
// structured form with values cut to the shrinker's limit and every cut said in `cut`.

import type {
  ComparedRun,
  EntryFacts,
  NoComparison,
  RunComparison,
  ValueDiff,
} from "../../diagnosis/compare-types.js";
import type { NextAction } from "../../diagnosis/index.js";
import { actionLine } from "../../diagnosis/index.js";
import { cut as clip } from "../../format.js";
import type { Answer, Shrinker } from "../budget.js";
import { brief, iso } from "../format.js";
import { count } from "../limits.js";
import { runUri, stateUri, stepUri } from "../uris.js";

/** How many of each list an answer at a value limit shows: changes per value, entries, outliers. */
function room(s: Shrinker) {
  const n = s.limit >= 3000 ? 20 : s.limit >= 700 ? 8 : 3;
  return { changes: n, entries: n, outliers: n, value: Math.max(60, Math.floor(s.limit / 8)) };
}

const label = (r: ComparedRun) => `${r.workflow}/${r.key}`;

function runShape(r: ComparedRun) {
  return {
    workflow: r.workflow,
    key: r.key,
    status: r.status,
    version: r.version,
    entries: r.entries,
    finishedAt: iso(r.finishedAt),
  };
}

/** A diff with at most `room` changes, each value cut to fit, and what was left out noted in `cut`. */
function shownDiff(
  d: ValueDiff,
  what: string,
  where: { run: string; other: string; name: string },
  s: Shrinker,
  cut: string[],
) {
  const r = room(s);
  const changes = d.changes.slice(0, r.changes).map((c) => ({
    pointer: s.text(c.pointer, where.run, where.name, Math.max(200, r.value)),
    ...("run" in c ? { run: s.value(c.run, where.run, where.name, r.value) } : {}),
    ...("other" in c ? { other: s.value(c.other, where.other, where.name, r.value) } : {}),
  }));
  if (changes.length < d.total) cut.push(`${what}: ${changes.length} of ${howMany(d)} changes shown`);
  return { changes, total: d.total, more: d.more };
}

function changeLine(c: { pointer: string; run?: unknown; other?: unknown }, max: number): string {
  const side = (v: unknown, present: boolean) => (present ? brief(v, max) : "absent");
  return `${clip(c.pointer, 200) || "(whole value)"}: ${side(c.run, "run" in c)} here, ${side(c.other, "other" in c)} there`;
}

function diffLines(d: ValueDiff, n: number): string {
  const lines = d.changes.slice(0, n).map((c) => changeLine(c, 120));
  const rest = d.total - lines.length;
  return `${lines.join("; ")}${rest > 0 ? `; and ${d.more ? "more than " : ""}${count(rest)} more` : ""}`;
}

function entryLine(e: EntryFacts | null): string {
  if (!e) return "no such entry";
  return `${e.kind} ${e.status}${e.error ? ` (${e.error})` : ""}`;
}

/** "3", "1,204", "more than 10,000". */
const howMany = (d: ValueDiff) => `${d.more ? "more than " : ""}${count(d.total)}`;

/** The differences in the order the text names them first: code, history, input, outputs, state, timing. */
function headline(c: RunComparison): string {
  const parts: string[] = [];
  if (c.versions.differ) parts.push(`code version (v${c.versions.run} here, v${c.versions.other} there)`);
  const f = c.firstDifference;
  if (f)
    parts.push(`history at "${clip(f.path, 200)}" (${entryLine(f.run)} here; ${entryLine(f.other)} there)`);
  if (c.input.total) {
    const first = c.input.changes.slice(0, 3).map((x) => clip(x.pointer, 100) || "(whole input)");
    parts.push(
      `input at ${howMany(c.input)} pointer(s) (${first.join(", ")}${c.input.total > 3 ? ", ..." : ""})`,
    );
  }
  if (c.outputs.total) {
    const first = c.outputs.differing.slice(0, 3).map((o) => `"${clip(o.path, 100)}"`);
    parts.push(
      `output of ${c.outputs.total} shared step(s) (${first.join(", ")}${c.outputs.total > 3 ? ", ..." : ""})`,
    );
  }
  if (f?.state.total) parts.push(`state before "${clip(f.path, 100)}" at ${howMany(f.state)} pointer(s)`);
  if (c.timing.total) parts.push(`timing of ${c.timing.total} step(s)`);
  if (!parts.length)
    return `The runs do not differ: same code version (v${c.versions.run}), same input, every entry in both with the same kind and status, same outputs of the ${c.outputs.shared} completed entries both have, no timing outliers.`;
  return `The runs differ in: ${parts.join("; ")}.`;
}

/** The answer for two runs compared, at the shrinker's limit. */
export function comparisonAnswer(
  c: RunComparison,
  s: Shrinker,
  next: NextAction[],
): Answer<Record<string, unknown>> {
  const r = room(s);
  const cut: string[] = [];
  const run = c.run;
  const other = c.other;
  const f = c.firstDifference;
  const input = shownDiff(
    c.input,
    "input",
    { run: runUri(run.workflow, run.key), other: runUri(other.workflow, other.key), name: "The run whole" },
    s,
    cut,
  );
  const state = f
    ? shownDiff(
        f.state,
        "state",
        {
          run: f.run ? stepUri(run.workflow, run.key, f.run.id) : stateUri(run.workflow, run.key),
          other: f.other
            ? stepUri(other.workflow, other.key, f.other.id)
            : stateUri(other.workflow, other.key),
          name: "State at the entry whole",
        },
        s,
        cut,
      )
    : null;
  const path = (p: string, uri: string) => s.text(p, uri, "The run whole", 500);
  const outputs = c.outputs.differing.slice(0, r.entries).map((o) => ({
    path: path(o.path, runUri(run.workflow, run.key)),
    kind: o.kind,
    run: o.run,
    other: o.other,
    ...shownDiff(
      o.diff,
      `output of "${o.path}"`,
      {
        run: stepUri(run.workflow, run.key, o.run),
        other: stepUri(other.workflow, other.key, o.other),
        name: `Entry ${o.path} whole`,
      },
      s,
      cut,
    ),
  }));
  if (outputs.length < c.outputs.total)
    cut.push(`outputs: ${outputs.length} of ${count(c.outputs.total)} differing steps shown`);
  const outliers = c.timing.outliers
    .slice(0, r.outliers)
    .map((t) => ({ ...t, path: path(t.path, runUri(run.workflow, run.key)) }));
  if (outliers.length < c.timing.total)
    cut.push(`timing: ${outliers.length} of ${count(c.timing.total)} outliers shown`);
  const chosen =
    c.otherChosen === "latest-completed"
      ? `, the latest completed run of ${run.workflow} v${run.version}`
      : "";
  const lines = [
    headline(c),
    `Compared ${label(run)} (${run.status}, v${run.version}, ${run.entries} entries) with ${label(other)} (${other.status}, v${other.version}, ${other.entries} entries)${chosen}. "Here" is ${label(run)}, "there" ${label(other)}.`,
  ];
  if (f) {
    lines.push(
      `History first differs at "${clip(f.path, 200)}"${f.run ? ` (#${f.run.id})` : ""}: here ${entryLine(f.run)}; there ${entryLine(f.other)}${f.reason === "only-in-other" ? " (this run never reached it)" : ""}.`,
    );
    lines.push(
      f.state.total
        ? `State there (before the entry, or the side's last state): ${diffLines(f.state, 3)}.`
        : "State there is the same on both sides.",
    );
  } else lines.push("Histories match: every entry in both, with the same kind and status.");
  lines.push(c.input.total ? `Input: ${diffLines(c.input, 5)}.` : "Input: the same.");
  if (c.outputs.total) {
    lines.push(`Outputs of shared steps that differ (${c.outputs.total} of ${c.outputs.shared}):`);
    for (const o of c.outputs.differing.slice(0, Math.min(r.entries, 8)))
      lines.push(`- "${clip(o.path, 200)}" (#${o.run} here, #${o.other} there): ${diffLines(o.diff, 2)}`);
  } else lines.push(`Outputs: the same in all ${c.outputs.shared} completed entries both have.`);
  if (c.timing.total) {
    const list = c.timing.outliers
      .slice(0, 5)
      .map((t) => `"${clip(t.path, 100)}" ${t.runMs} ms here, ${t.otherMs} ms there (${t.factor}×)`);
    lines.push(
      `Timing outliers: ${list.join("; ")}${c.timing.total > 5 ? `; and ${c.timing.total - 5} more` : ""}.`,
    );
  }
  lines.push(
    c.versions.differ
      ? `Code versions differ: v${c.versions.run} here, v${c.versions.other} there.`
      : `Code version: both v${c.versions.run}.`,
  );
  if (cut.length) lines.push(`Cut to fit: ${cut.join("; ")}.`);
  return answerOf(lines, next, {
    run: runShape(run),
    other: runShape(other),
    otherChosen: c.otherChosen,
    versions: c.versions,
    firstDifference:
      f && state
        ? {
            path: path(f.path, runUri(run.workflow, run.key)),
            reason: f.reason,
            run: f.run,
            other: f.other,
            state,
          }
        : null,
    input,
    outputs: { differing: outputs, total: c.outputs.total, shared: c.outputs.shared },
    timing: { outliers, total: c.timing.total },
    cut,
  });
}

/** The answer when there is no run to compare with: why, and exactly what to pass instead. */
export function noComparisonAnswer(n: NoComparison, next: NextAction[]): Answer<Record<string, unknown>> {
  const run = n.run;
  const lines = [
    `Nothing to compare with: ${n.reason}`,
    n.otherVersions.length
      ? `Completed runs on other versions: ${n.otherVersions.map((o) => `"${o.key}" (v${o.version})`).join(", ")}; comparing with one also shows what the code change did.`
      : `No run of ${run.workflow} has completed on any version.`,
    `Pass the run to compare with as otherKey (otherWorkflow for another workflow's run), e.g. a run you know succeeded; list_runs finds candidates.`,
  ];
  return answerOf(lines, next, {
    run: runShape(run),
    other: null,
    reason: n.reason,
    otherVersions: n.otherVersions.map((o) => ({ ...o, finishedAt: iso(o.finishedAt) })),
    cut: [],
  });
}

/** The text (its lines, then the next actions) and the structured form (the first line as its summary). */
function answerOf(
  lines: string[],
  next: NextAction[],
  structured: Record<string, unknown>,
): Answer<Record<string, unknown>> {
  if (next.length) lines.push("Next:", ...next.map((a, i) => `${i + 1}. ${actionLine(a, false)}`));
  return { text: lines.join("\n"), structured: { summary: lines[0]!, ...structured, nextActions: next } };
}
