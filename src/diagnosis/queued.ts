// Runs queued behind their workflow's concurrency limit: pending (or woken) until a slot of their key frees.
// Not trouble in itself, so said plainly, naming the runs that hold the slots and how to look at them.

import { call } from "./actions.js";
import type { Finding, RunFacts } from "./facts.js";
import { plural } from "./format.js";

/** The finding for a run waiting for a concurrency slot, or null when it is not queued. */
export async function diagnoseQueued(facts: RunFacts): Promise<Finding | null> {
  const { engine, info } = facts;
  const c = await engine.concurrency(info.id);
  if (!c?.queued || !c.text) return null;
  const of = c.key === "" ? `workflow "${info.workflow}"` : `${c.label} ${c.key}`;
  const holders = c.holders.map((h) => `${h.workflow}/${h.key} (${h.status})`);
  return {
    category: "queued-by-limit",
    culprit: null,
    summary: `The run is ${info.status}, ${c.text}. It starts by itself, oldest first, when one of them completes, fails or suspends (sleeps or waits); look at the holders if they take too long.`,
    evidence: [
      {
        kind: "concurrency",
        fact: `at most ${c.limit} run(s) of ${of} execute at once; the slots are held by ${plural(c.holderCount, "run")}${holders.length ? `: ${holders.join(", ")}` : ""}`,
        ref: "run",
      },
      ...(c.ahead > 0
        ? [{ kind: "queue", fact: `${plural(c.ahead, "older run")} of ${of} queued ahead of it`, ref: "run" }]
        : []),
    ],
    nextActions: [
      ...c.holders
        .slice(0, 3)
        .map((h) =>
          call(
            "diagnose_run",
            { workflow: h.workflow, key: h.key },
            `see how a run holding the slot is doing`,
          ),
        ),
      call("wait_for_run", { ...facts.address, until: "finished" }, "follow it to its end"),
    ],
    failure: null,
  };
}
