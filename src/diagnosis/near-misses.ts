// Near-misses of a queue wait: messages meant for it that went astray — refused for an unknown queue,
// left on another queue of the run, or sent to another run whose key looks like this one's.

import type { z } from "zod";
import type { Engine } from "../engine/engine.js";
import type { RejectionRow } from "../storage/store.js";
import type { RunFacts } from "./facts.js";

/** A message that looks meant for the waiting entry but did not reach it. */
export interface NearMiss {
  kind: "unknown-queue" | "other-queue" | "other-run";
  /** The queue it went to. */
  queue: string;
  /** The other run's key (kind "other-run"). */
  key?: string;
  at: number;
  /** The body as sent (parsed JSON, or the raw text when it is not JSON). */
  body: unknown;
  /** "rejection #3", "message #12". */
  ref: string;
  /** A short id of the record: "rejection-3", "message-12". */
  source: string;
  /** Why it looks like a near-miss. */
  why: string;
  /** The body is valid for the queue the run waits on, so it can be sent there as is. */
  fits: boolean;
  /** The queue it went to is named like the awaited one (a typo, case, separators). */
  named?: boolean;
  /** A consumed message (another run read it). */
  consumed?: boolean;
}

/** Edit distance, capped: returns cap+1 as soon as the distance passes cap. */
export function editDistance(a: string, b: string, cap = 3): number {
  if (Math.abs(a.length - b.length) > cap) return cap + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, row[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      row.push(v);
      if (v < best) best = v;
    }
    if (best > cap) return cap + 1;
    prev = row;
  }
  return prev[b.length]!;
}

/** How `other` resembles `wanted`, or null when it does not: case, separators, a letter or two. */
export function resemblance(wanted: string, other: string): string | null {
  if (wanted === other) return null;
  if (wanted.toLowerCase() === other.toLowerCase()) return "differs only in letter case";
  const bare = (s: string) => s.toLowerCase().replace(/[^a-z0-9]/g, "");
  if (bare(wanted) === bare(other)) return "differs only in separators";
  const d = editDistance(wanted.toLowerCase(), other.toLowerCase(), 2);
  if (d <= (Math.min(wanted.length, other.length) >= 6 ? 2 : 1))
    return `differs by ${d} character${d === 1 ? "" : "s"}`;
  return null;
}

/**
 * How another run's key resembles this run's, or null. Keys that carry different numbers name different
 * things (order-1001 and order-1002, att-3 and att-4), however close they look, so only keys with the same
 * numbers can be a slip of the sender (case, separators, a mistyped letter).
 */
export function keyResemblance(wanted: string, other: string): string | null {
  const numbers = (s: string) => (s.match(/\d+/g) ?? []).map((n) => n.replace(/^0+(?=\d)/, "")).join(",");
  if (numbers(wanted) !== numbers(other)) return null;
  return resemblance(wanted, other);
}

function parseBody(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/** The schema of the awaited queue, if this process or a published definition knows it. */
async function schemaOf(engine: Engine, runId: number, queue: string): Promise<z.ZodType | null> {
  try {
    return await engine.queueSchema(await engine.runRow(runId), queue);
  } catch {
    return null;
  }
}

/** Messages that look meant for `queue` of this run since `since`, newest first (at most `max`). */
export async function findNearMisses(
  facts: RunFacts,
  queue: string,
  since: number,
  rejections: RejectionRow[],
  max = 5,
): Promise<NearMiss[]> {
  const { engine, info } = facts;
  const schema = await schemaOf(engine, info.id, queue);
  const fits = (body: unknown) => schema?.safeParse(body).success ?? false;
  const out: NearMiss[] = [];

  // Refused for a queue the workflow does not have (schema errors on the awaited queue are not near-misses).
  for (const r of rejections) {
    if (r.queue === queue || r.at < since) continue;
    const body = parseBody(r.body);
    const like = resemblance(queue, r.queue);
    if (!like && !fits(body)) continue;
    out.push({
      kind: "unknown-queue",
      queue: r.queue,
      at: r.at,
      body,
      ref: `rejection #${r.id}`,
      source: `rejection-${r.id}`,
      why: `refused: queue "${r.queue}" does not exist${like ? ` (${like} from "${queue}")` : ""}`,
      fits: fits(body),
      named: like !== null,
    });
  }

  // Left on another queue of this run.
  const pending = await engine.store.listMessages(info.id, { includeConsumed: false, limit: 200 });
  for (const m of pending) {
    if (m.queue === queue) continue;
    const body = parseBody(m.body);
    const like = resemblance(queue, m.queue);
    if (!like && !fits(body)) continue;
    out.push({
      kind: "other-queue",
      queue: m.queue,
      at: m.sentAt,
      body,
      ref: `message #${m.id}`,
      source: `message-${m.id}`,
      why: `unread on queue "${m.queue}"${like ? ` (${like} from "${queue}")` : ""}`,
      fits: fits(body),
      named: like !== null,
    });
  }

  // Sent to another run of the workflow whose key looks like this one's. A message that run read is its own
  // unless the keys differ only in case or separators (a sender that spelled the key its own way).
  for (let cursor: string | undefined, scanned = 0; scanned < 2000; ) {
    const page = await engine.listRuns({
      workflow: info.workflow,
      limit: 500,
      ...(cursor ? { cursor } : {}),
    });
    for (const other of page.runs) {
      scanned++;
      const like = other.id === info.id ? null : keyResemblance(info.key, other.key);
      if (!like) continue;
      const spelling = like.startsWith("differs only");
      const messages = await engine.store.listMessages(other.id, { includeConsumed: spelling, limit: 50 });
      for (const m of messages) {
        if (m.queue !== queue && !resemblance(queue, m.queue)) continue;
        const body = parseBody(m.body);
        out.push({
          kind: "other-run",
          queue: m.queue,
          key: other.key,
          at: m.sentAt,
          body,
          ref: `run ${other.workflow}/${other.key} message #${m.id}`,
          source: `message-${m.id}`,
          why: `sent to run "${other.key}" (key ${like} from "${info.key}")${m.consumedAt !== null ? ", which consumed it" : ""}`,
          fits: fits(body),
          consumed: m.consumedAt !== null,
        });
      }
    }
    if (!page.nextCursor) break;
    cursor = page.nextCursor;
  }
  return out.sort((a, b) => b.at - a.at).slice(0, max);
}
