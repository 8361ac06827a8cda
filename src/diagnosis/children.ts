// A run in trouble because of a child run (ctx.child): the diagnosis follows the chain down to the innermost
// run in trouble, blames its culprit there, and lists the calls that fix it there, then those for the parent.

import { call, replayActions } from "./actions.js";
import type { RunFacts } from "./facts.js";
import { cut } from "./format.js";
import type { Diagnosis, Evidence } from "./types.js";

/** The child run a run is in trouble over: its failed ctx.child entry, or the child it waits on. */
export interface ChildLink {
  workflow: string;
  key: string;
  /** The parent's entry that started the child. */
  entry: { id: number; path: string; name: string; scope: string };
  /** True when the parent failed over it (its entry failed), false when it still waits for it. */
  failed: boolean;
}

/** The child this run is in trouble over, or null. */
export function childLink(facts: RunFacts): ChildLink | null {
  const children = facts.entries.filter((e) => e.kind === "child");
  const address = (d: Record<string, unknown> | undefined) =>
    typeof d?.workflow === "string" && typeof d.key === "string"
      ? { workflow: d.workflow, key: d.key }
      : null;
  if (facts.info.status === "failed") {
    const failed = children.filter((e) => e.status === "failed").at(-1);
    const a = address(failed?.detail);
    return failed && a
      ? {
          ...a,
          entry: { id: failed.id, path: failed.path, name: failed.name, scope: failed.scope },
          failed: true,
        }
      : null;
  }
  if (facts.info.status === "waiting") {
    const waiting = children.find((e) => e.status === "waiting");
    const a = address(waiting?.detail);
    return waiting && a
      ? {
          ...a,
          entry: { id: waiting.id, path: waiting.path, name: waiting.name, scope: waiting.scope },
          failed: false,
        }
      : null;
  }
  return null;
}

/** This run's diagnosis as the innermost one, seen from this run through `link`. */
export function throughChild(facts: RunFacts, link: ChildLink, inner: Diagnosis): Diagnosis {
  const { info } = facts;
  const child = `${link.workflow}/${link.key}`;
  const how = link.failed
    ? `failed because its child run ${child} (entry "${link.entry.path}") ${inner.run.status}`
    : `waits at "${link.entry.path}" for its child run ${child}, which is ${inner.run.status}`;
  const chain = [
    { workflow: info.workflow, key: info.key, status: info.status, entry: link.entry.path },
    ...(inner.chain ?? [{ workflow: inner.run.workflow, key: inner.run.key, status: inner.run.status }]),
  ];
  const innermost = chain.at(-1)!;
  const evidence: Evidence[] = [
    {
      kind: "child",
      fact: `Run ${info.workflow}/${info.key} ${how}.`,
      entry: link.entry.id,
      ref: `run ${child}`,
    },
    ...inner.evidence,
  ];
  const after = link.failed
    ? replayActions(
        facts.address,
        link.entry.path,
        `${info.workflow}/${info.key} from "${link.entry.path}" once ${child} completed (a completed child is reused, not run again)`,
      )
    : [];
  return {
    run: { workflow: info.workflow, key: info.key, status: info.status, version: info.version },
    category: inner.category,
    culprit: inner.culprit
      ? { ...inner.culprit, run: inner.culprit.run ?? { workflow: innermost.workflow, key: innermost.key } }
      : null,
    summary: cut(
      `Run ${info.workflow}/${info.key} ${how}. In ${innermost.workflow}/${innermost.key}: ${inner.summary}`,
      1200,
    ),
    evidence,
    similar: inner.similar,
    nextActions: [...inner.nextActions, ...after],
    chain,
  };
}

/** A run waiting for a child that is not in trouble: healthy, saying what the child waits on. */
export function waitingOnChild(facts: RunFacts, link: ChildLink, inner: Diagnosis): Diagnosis {
  const { info } = facts;
  const child = { workflow: link.workflow, key: link.key };
  return {
    run: { workflow: info.workflow, key: info.key, status: info.status, version: info.version },
    category: "healthy",
    culprit: { ...link.entry, kind: "child" },
    summary: cut(
      `The run waits at "${link.entry.path}" for its child run ${link.workflow}/${link.key}, which is ${inner.run.status}: nothing is wrong here; it resumes when the child ends. The child: ${inner.summary}`,
      1200,
    ),
    evidence: [
      {
        kind: "child",
        fact: `"${link.entry.path}" waits for child run ${link.workflow}/${link.key} (${inner.run.status})`,
        entry: link.entry.id,
        ref: `run ${link.workflow}/${link.key}`,
      },
    ],
    similar: null,
    nextActions: [call("get_run", child, "see the child run and what it waits on"), ...inner.nextActions],
  };
}
