// Runs waiting on a queue: messages refused by the schema, a wait with no message for a long time (and the
// near-misses that explain it), or a healthy wait.

import type { WaitInfo } from "../engine/views.js";
import { queueNames } from "../format.js";
import type { RejectionRow } from "../storage/store.js";
import { call, person, sendActions } from "./actions.js";
import { culpritOf, entryAt, type Finding, type RunFacts } from "./facts.js";
import { brief, cut, iso, plural, span } from "./format.js";
import { findNearMisses, type NearMiss } from "./near-misses.js";
import { repairBody } from "./repair.js";
import type { Culprit, Evidence, NextAction } from "./types.js";

interface QueueWait {
  wait: WaitInfo & { queue: string };
  since: number;
  facts: RunFacts;
  /** A ctx.queue.nextBatch wait: its size and how many messages it holds so far. */
  batch: { count: number; have: number } | null;
}

/** The batch a waiting entry collects (its detail's count and message ids), or null for ctx.queue.next. */
function batchOf(facts: RunFacts, path: string): QueueWait["batch"] {
  const detail = entryAt(facts, path)?.detail;
  if (typeof detail?.count !== "number") return null;
  return { count: detail.count, have: Array.isArray(detail.messageIds) ? detail.messageIds.length : 0 };
}

/** 'queue "items"', or 'a batch of 3 on queue "items" (1 of 3 arrived)'. */
function waitsFor(w: QueueWait): string {
  const on = `queue "${w.wait.queue}"`;
  return w.batch ? `a batch of ${w.batch.count} on ${on} (${w.batch.have} of ${w.batch.count} arrived)` : on;
}

/** The refusal without the parts every refusal repeats. */
function refusal(error: string): string {
  return error
    .replace(/^The message for queue "[^"]*" of run "[^"]*" does not match the queue's schema: /, "")
    .replace(/\. Fix the body and send it again; nothing was stored\.$/, "");
}

/** The waiting entry as culprit (null if history lacks it, which a consistent database never does). */
function waitCulprit(w: QueueWait): Culprit | null {
  const e = entryAt(w.facts, w.wait.entry);
  return e ? culpritOf(e) : null;
}

function waitFact(w: QueueWait): Evidence {
  const e = entryAt(w.facts, w.wait.entry);
  const age = w.facts.now - w.since;
  const timeout = w.wait.until === null ? "no timeout" : `gives up at ${iso(w.wait.until)}`;
  return {
    kind: "wait",
    fact: `"${w.wait.entry}" waits ${w.batch ? "for" : "on"} ${waitsFor(w)} since ${iso(w.since)} (${span(age)}), ${timeout}`,
    ...(e ? { entry: e.id } : {}),
  };
}

/** The diagnosis of a run waiting on one or more queues. */
export async function diagnoseWaiting(facts: RunFacts): Promise<Finding> {
  const { engine, info } = facts;
  const waits: QueueWait[] = (info.waiting ?? [])
    .filter((w): w is WaitInfo & { queue: string } => w.kind === "queue" && typeof w.queue === "string")
    .map((wait) => ({
      wait,
      since: entryAt(facts, wait.entry)?.startedAt ?? info.updatedAt,
      facts,
      batch: batchOf(facts, wait.entry),
    }));
  const rejections = await engine.store.listRejections(info.id, 50);
  for (const w of waits) {
    const refused = rejections.filter((r) => r.queue === w.wait.queue && r.at >= w.since);
    if (refused.length)
      return rejected(w, refused, await findNearMisses(facts, w.wait.queue, info.createdAt, rejections));
  }
  // A wait on several queues is one entry per queue here: a miss named like one of them (a sender's typo
  // of "reject") belongs to that queue, even when its body would also fit an earlier one ("approve").
  const found = [];
  for (const w of waits)
    found.push({ w, misses: await findNearMisses(facts, w.wait.queue, info.createdAt, rejections) });
  const named = found.find((f) => f.misses.some((m) => m.named));
  if (named) return stuck(named.w, named.misses);
  for (const { w, misses } of found) {
    // A wait with a timeout still ahead is as long as its author meant it to be: not stuck by age alone.
    const patient = w.wait.until !== null && w.wait.until > facts.now;
    if (misses.length || (!patient && facts.now - w.since >= facts.options.stuckAfterMs))
      return stuck(w, misses);
  }
  return healthyWait(facts, waits);
}

async function rejected(w: QueueWait, refused: RejectionRow[], misses: NearMiss[]): Promise<Finding> {
  const { facts, wait } = w;
  const { engine, info, address } = facts;
  const evidence: Evidence[] = [waitFact(w)];
  for (const r of refused.slice(0, 3)) {
    evidence.push({
      kind: "rejected",
      fact: `refused at ${iso(r.at)}: ${cut(refusal(r.error), 200)}; body ${cut(r.body, 120)}`,
      ref: `rejection #${r.id}`,
    });
  }
  const latest = refused[0]!;
  const schema = await engine.queueSchema(await engine.runRow(info.id), wait.queue).catch(() => null);
  let body: unknown;
  try {
    body = JSON.parse(latest.body);
  } catch {
    body = undefined;
  }
  const repaired = schema && body !== undefined ? repairBody(schema, body) : null;
  // A message that went astray (another queue, a typo) may be the decision the refused one was not.
  evidence.push(...misses.map(missFact));
  const fit = misses.find((m) => m.fits);
  const nextActions: NextAction[] = [];
  if (fit) {
    nextActions.push(
      person(
        `Two messages were meant for queue "${wait.queue}": one refused by its schema, and one that went astray (${fit.ref}: ${fit.why}) whose body is valid as is. Ask the user which decision is right before sending either.`,
      ),
      ...sendActions(
        address,
        wait.queue,
        fit.body,
        fit.source,
        `the message that went astray (${fit.ref}), sent where the run waits, if the user confirms it`,
        info.status,
      ),
    );
  }
  if (repaired) {
    evidence.push({
      kind: "repair",
      fact: `with ${repaired.changes.join(", ")} the body matches the schema`,
      ref: `rejection #${latest.id}`,
    });
    nextActions.push(
      ...sendActions(
        address,
        wait.queue,
        repaired.body,
        `rejection-${latest.id}`,
        `resend the refused message with ${repaired.changes.join(", ")}; confirm the corrected body with the user first`,
        info.status,
      ),
    );
  } else {
    nextActions.push(
      person(
        `Decide the message for queue "${wait.queue}" with a body that matches its schema (the refused one did not).`,
      ),
      call("get_run", address, `shows the JSON Schema messages on "${wait.queue}" must match`),
    );
  }
  nextActions.push(person(`Fix the sender so its messages to "${wait.queue}" match the queue's schema.`));
  return {
    category: "rejected-messages",
    culprit: waitCulprit(w),
    summary: `The run waits on queue "${wait.queue}" at "${wait.entry}", but ${plural(refused.length, "message")} sent to it ${refused.length === 1 ? "was" : "were"} refused by the queue's schema, so nothing arrived. ${fit ? `Another message went astray (${fit.why}) with a valid body: ask the user which decision is right, send that one, and` : repaired ? `Resend it corrected (${repaired.changes.join(", ")}) and` : "Send a valid message and"} fix the sender.`,
    evidence,
    nextActions,
    failure: null,
  };
}

function missFact(m: NearMiss): Evidence {
  return { kind: "near-miss", fact: `${m.why} at ${iso(m.at)}: body ${brief(m.body, 100)}`, ref: m.ref };
}

function stuck(w: QueueWait, misses: NearMiss[]): Finding {
  const { facts, wait, batch } = w;
  const { info, address } = facts;
  const age = span(facts.now - w.since);
  const evidence: Evidence[] = [
    waitFact(w),
    batch && batch.have > 0
      ? {
          kind: "no-message",
          fact: `${batch.have} of ${batch.count} messages have arrived on "${wait.queue}"; ${batch.count - batch.have} more are awaited`,
        }
      : { kind: "no-message", fact: `no message has arrived on "${wait.queue}"` },
  ];
  evidence.push(...misses.map(missFact));
  const nextActions: NextAction[] = [];
  // A batch needs every message that went astray (up to the ones it still lacks), in the order they were
  // sent, as a sender's would have arrived; a single wait needs the latest one that fits.
  const fitting = misses.filter((m) => m.fits);
  const resend = batch
    ? fitting.slice(0, batch.count - batch.have).sort((a, b) => a.at - b.at)
    : fitting.slice(0, 1);
  const fit = resend[0];
  for (const m of resend) {
    const [send] = sendActions(
      address,
      wait.queue,
      m.body,
      m.source,
      `the message that went astray (${m.ref}), sent where the run waits`,
      info.status,
    );
    nextActions.push(send!);
  }
  if (fit)
    nextActions.push(
      call("wait_for_run", { ...address, fromStatus: info.status }, "see what the run does with it"),
    );
  const first = misses[0];
  if (first) {
    const queues = [...new Set(misses.filter((m) => m.kind !== "other-run").map((m) => `"${m.queue}"`))];
    nextActions.push(
      person(
        first.kind === "other-run"
          ? `Fix the sender: it addresses run "${first.key}" instead of "${info.key}" (keys are case-sensitive).`
          : `Fix the sender: it sends to queue ${queues.join(" and ")} instead of "${wait.queue}".`,
      ),
    );
  }
  if (!fit) {
    nextActions.unshift(
      person(
        `Find out why nobody sent the message for queue "${wait.queue}", or send it yourself with a body that matches its schema.`,
      ),
      call("get_run", address, `shows the JSON Schema of queue "${wait.queue}"`),
    );
  }
  const timeout = wait.until === null ? "" : ` (it gives up at ${iso(wait.until)})`;
  const astray =
    batch && misses.length > 1
      ? `${misses.length} messages meant for it went astray, the latest: ${first?.why}`
      : `the message meant for it went astray: ${first?.why}`;
  const resendText =
    resend.length > 1
      ? `Send those ${resend.length} to queue "${wait.queue}" of this run (the calls below) and fix the sender.`
      : `Send it to queue "${wait.queue}" of this run (the call below) and fix the sender.`;
  return {
    category: "stuck-waiting",
    culprit: waitCulprit(w),
    summary: first
      ? `The run has waited ${age} on ${waitsFor(w)} at "${wait.entry}", but ${astray}. ${fit ? resendText : "Fix the sender and send it again."}`
      : `The run has waited ${age} on ${waitsFor(w)} at "${wait.entry}" and ${batch && batch.have > 0 ? "no further message has arrived" : "no message has arrived"}${timeout}. Whoever should answer has not: check the sender, or send the message with send_message.`,
    evidence,
    nextActions,
    failure: null,
  };
}

function healthyWait(facts: RunFacts, waits: QueueWait[]): Finding {
  // A wait on several queues is one wait here: one fact naming its queues (the first few, then a count).
  const groups = new Map<string, { w: QueueWait; queues: string[] }>();
  for (const w of waits) {
    const g = groups.get(w.wait.entry);
    if (g) g.queues.push(w.wait.queue);
    else groups.set(w.wait.entry, { w, queues: [w.wait.queue] });
  }
  const first = [...groups.values()][0];
  if (!first) {
    return {
      category: "healthy",
      culprit: null,
      summary: `The run is waiting but records no queue wait. Read it with get_run.`,
      evidence: [],
      nextActions: [call("get_run", facts.address, "see what it waits on")],
      failure: null,
    };
  }
  const on = (queues: string[]) =>
    queues.length > 1 ? `any of queues ${queueNames(queues)}` : `queue ${queueNames(queues)}`;
  const { w } = first;
  const entry = entryAt(facts, w.wait.entry);
  return {
    category: "healthy",
    culprit: entry ? culpritOf(entry) : null,
    summary: `The run is waiting on ${on(first.queues)} at "${w.wait.entry}" since ${iso(w.since)}${w.wait.until === null ? "" : ` and gives up at ${iso(w.wait.until)}`}; nothing is wrong. Send the message it waits for when it is decided (get_run shows ${first.queues.length > 1 ? "their schemas" : "its schema"}).`,
    evidence: [...groups.values()].map((g) =>
      g.queues.length > 1
        ? {
            ...waitFact(g.w),
            fact: waitFact(g.w).fact.replace(`queue "${g.w.wait.queue}"`, on(g.queues)),
          }
        : waitFact(g.w),
    ),
    nextActions: [
      call(
        "get_run",
        facts.address,
        first.queues.length > 1
          ? `shows the JSON Schemas of the queues it waits on`
          : `shows the JSON Schema of queue "${w.wait.queue}"`,
      ),
    ],
    failure: null,
  };
}
