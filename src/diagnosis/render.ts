// A diagnosis as text: short for an MCP answer beside its structured form, whole for a person in a terminal.

import type { Diagnosis, Evidence, NextAction } from "./types.js";

function evidenceLine(e: Evidence): string {
  const where = [
    e.entry !== undefined ? `#${e.entry}` : null,
    e.attempt !== undefined ? `attempt ${e.attempt}` : null,
    e.ref && e.entry === undefined ? e.ref : null,
  ]
    .filter(Boolean)
    .join(", ");
  return `${e.kind}: ${e.fact}${where ? ` [${where}]` : ""}`;
}

/** `replay_run {"workflow":"w","key":"k","dryRun":true}` or `(person) Fix ...`. */
export function actionLine(a: NextAction, withWhy = true): string {
  return a.kind === "person"
    ? `(person) ${a.change}`
    : `${a.tool} ${JSON.stringify(a.args)}${withWhy ? ` — ${a.why}` : ""}`;
}

function head(d: Diagnosis): string {
  const where = d.culprit?.run ? ` in ${d.culprit.run.workflow}/${d.culprit.run.key}` : "";
  const culprit = d.culprit
    ? `, culprit "${d.culprit.path}"${where} (#${d.culprit.id}, ${d.culprit.kind})`
    : "";
  const chain = d.chain
    ? `; through ${d.chain.map((c) => `${c.workflow}/${c.key} (${c.status})`).join(" → ")}`
    : "";
  return `${d.run.workflow}/${d.run.key} [${d.run.status}, v${d.run.version}]: ${d.category}${culprit}${chain}`;
}

function similarLine(d: Diagnosis): string | null {
  const s = d.similar;
  if (!s || s.count < 2) return null;
  return `${s.count} runs failed this way between ${s.firstSeen} and ${s.lastSeen}${s.keys.length ? ` (e.g. ${s.keys.join(", ")})` : ""}; signature ${s.signature}: ${s.pattern}`;
}

/** "error, frame, 4× attempt, input, state": what the evidence holds, by kind, in order. */
function evidenceKinds(d: Diagnosis): string {
  const counts = new Map<string, number>();
  for (const e of d.evidence) counts.set(e.kind, (counts.get(e.kind) ?? 0) + 1);
  return [...counts].map(([k, n]) => (n > 1 ? `${n}× ${k}` : k)).join(", ");
}

/**
 * The short text of a diagnose_run answer: the summary (which names the error, the frame or the message
 * gone astray), what the evidence holds, similar failures, and the next actions as exact calls.
 */
export function diagnosisText(d: Diagnosis): string {
  const lines = [head(d), d.summary];
  if (d.evidence.length) lines.push(`Evidence (structuredContent.evidence): ${evidenceKinds(d)}.`);
  // What a completed run of the same version had that this one lacks: the likeliest cause, in full.
  for (const e of d.evidence) if (e.kind === "sibling") lines.push(`Sibling: ${e.fact}`);
  const similar = similarLine(d);
  if (similar) lines.push(`Similar: ${similar}`);
  if (d.nextActions.length) {
    lines.push("Next:");
    for (const [i, a] of d.nextActions.entries()) lines.push(`${i + 1}. ${actionLine(a, false)}`);
  }
  return lines.join("\n");
}

/** The whole diagnosis for a person (`waymark diagnose`). */
export function diagnosisReport(d: Diagnosis): string {
  const lines = [head(d), "", d.summary, ""];
  if (d.evidence.length) {
    lines.push("Evidence:");
    for (const e of d.evidence) lines.push(`  - ${evidenceLine(e)}`);
    lines.push("");
  }
  const similar = similarLine(d);
  if (similar) lines.push(`Similar failures: ${similar}`, "");
  if (d.nextActions.length) {
    lines.push("What to do next:");
    for (const [i, a] of d.nextActions.entries()) {
      lines.push(
        a.kind === "person"
          ? `  ${i + 1}. You: ${a.change}`
          : `  ${i + 1}. ${a.why}:\n       ${a.tool} ${JSON.stringify(a.args)}`,
      );
    }
  }
  return `${lines.join("\n").trimEnd()}\n`;
}
