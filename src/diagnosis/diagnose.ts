// diagnose(engine, run): the category a run's trouble falls in, the entry to blame, the facts, runs failing
// the same way, and the exact next tool calls. Reads only; never imports the MCP layer.

import type { Engine } from "../engine/engine.js";
import { type RollbackSummary, rollbackSummary } from "../engine/rollback-summary.js";
import { childLink, throughChild, waitingOnChild } from "./children.js";
import { type Finding, gatherFacts, type RunFacts } from "./facts.js";
import { diagnoseFailed } from "./failure.js";
import { diagnoseCancelled, diagnoseRetrying, diagnoseSleeping, diagnoseStalled, healthy } from "./live.js";
import { diagnoseQueued } from "./queued.js";
import { siblingEvidence } from "./sibling.js";
import { type FailureKey, listFailures, normaliseMessage, signatureOf } from "./signatures.js";
import type { DiagnoseOptions, Diagnosis, Evidence, NextAction, Similar } from "./types.js";
import { diagnoseWaiting } from "./waiting.js";

async function classify(facts: RunFacts): Promise<Finding> {
  switch (facts.info.status) {
    case "failed":
      return diagnoseFailed(facts);
    case "cancelled":
      return diagnoseCancelled(facts);
    case "completed":
      return healthy(facts);
  }
  const stalled = await diagnoseStalled(facts);
  if (stalled) return stalled;
  const queued = await diagnoseQueued(facts);
  if (queued) return queued;
  switch (facts.info.status) {
    case "retrying":
      return diagnoseRetrying(facts);
    case "waiting":
      return diagnoseWaiting(facts);
    case "sleeping":
      return diagnoseSleeping(facts);
    default:
      return healthy(facts);
  }
}

/** What a rollback undid and did not, as evidence. */
function rollbackEvidence(r: RollbackSummary): Evidence[] {
  const out: Evidence[] = [{ kind: "rollback", fact: r.text }];
  if (r.undone.length)
    out.push({ kind: "rollback", fact: `Undone (in this order): ${r.undone.join(", ")}.` });
  if (r.failed)
    out.push({
      kind: "rollback",
      fact: `The rollback handler of ${r.failed.step} failed: ${r.failed.error}.`,
    });
  if (r.notUndone.length)
    out.push({ kind: "rollback", fact: `Not undone (their work stands): ${r.notUndone.join(", ")}.` });
  return out;
}

/** Runs of the same workflow failing with the same signature within the window. */
async function similarTo(facts: RunFacts, key: FailureKey): Promise<Similar> {
  const signature = signatureOf(key);
  const list = await listFailures(facts.engine, {
    since: facts.now - facts.options.similarWindowMs,
    workflow: facts.info.workflow,
    signature,
    limit: 1,
  });
  const group = list.failures[0];
  if (!group || group.count < 2)
    return { signature, pattern: normaliseMessage(key.message), count: 1, keys: [] };
  return {
    signature,
    pattern: group.pattern,
    count: group.count,
    firstSeen: group.firstSeen,
    lastSeen: group.lastSeen,
    keys: group.keys.filter((k) => k !== facts.info.key).slice(0, 4),
  };
}

/** Diagnoses one run, by id or by workflow and key. Throws RunNotFoundError for an unknown run. */
export async function diagnose(
  engine: Engine,
  run: number | { workflow: string; key: string },
  options: DiagnoseOptions = {},
): Promise<Diagnosis> {
  const runId = typeof run === "number" ? run : (await engine.requireRun(run.workflow, run.key)).id;
  return diagnoseAt(engine, runId, options, 0);
}

/** Children deeper than this are not followed (a chain of runs each starting the next). */
const MAX_DEPTH = 20;

async function diagnoseAt(
  engine: Engine,
  runId: number,
  options: DiagnoseOptions,
  depth: number,
): Promise<Diagnosis> {
  const facts = await gatherFacts(engine, runId, options);
  const link = depth < MAX_DEPTH ? childLink(facts) : null;
  const childRow = link ? await engine.findRun(link.workflow, link.key) : undefined;
  if (link && childRow) {
    const inner = await diagnoseAt(engine, childRow.id, options, depth + 1);
    if (inner.category !== "healthy") return throughChild(facts, link, inner);
    if (!link.failed) return waitingOnChild(facts, link, inner);
  }
  const finding = await classify(facts);
  const sibling = await siblingEvidence(facts, finding);
  const { info } = facts;
  const rollback = rollbackSummary(facts.entries, info.status, info.error);
  return {
    run: { workflow: info.workflow, key: info.key, status: info.status, version: info.version },
    category: finding.category,
    culprit: finding.culprit,
    summary: rollback ? `${finding.summary} Rollback: ${rollback.text}.` : finding.summary,
    evidence: [
      ...finding.evidence,
      ...(rollback ? rollbackEvidence(rollback) : []),
      ...(sibling ? sibling.evidence : []),
    ],
    similar: finding.failure ? await similarTo(facts, finding.failure) : null,
    nextActions: sibling ? withCompare(finding.nextActions, sibling.action) : finding.nextActions,
  };
}

/** The compare_runs call goes before the first replay (look before acting), else last. */
function withCompare(actions: NextAction[], compare: NextAction): NextAction[] {
  const at = actions.findIndex((a) => a.kind === "call" && a.tool === "replay_run");
  return at < 0 ? [...actions, compare] : [...actions.slice(0, at), compare, ...actions.slice(at)];
}
