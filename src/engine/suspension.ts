// What a suspending run records from its waits: its status, what it waits on, what wakes it and when.

import { assertNever } from "../assert-never.js";
import type { Wait } from "./core.js";

/** The fields of a suspend patch that follow from the run's waits. */
export interface WaitRecord {
  status: "retrying" | "waiting" | "sleeping";
  /** JSON: one { kind, entry, queue?, child?, until } per wait (per queue of a multi-queue wait). */
  waiting: string;
  /** "|queue|queue|": the queues a message to which wakes the run, or null. */
  waitQueues: string | null;
  /** "|id|id|": the child runs whose end wakes the run, or null. */
  waitRuns: string | null;
  /** The earliest deadline, or null. */
  wakeAt: number | null;
}

/** Sums up a suspending run's waits into the fields its suspend patch writes. */
export function waitRecord(waits: Iterable<Wait>): WaitRecord {
  let deadline = Number.POSITIVE_INFINITY;
  const queues = new Set<string>();
  const children = new Set<number>();
  let retrying = false;
  const waiting: Array<Record<string, unknown>> = [];
  for (const w of waits) {
    if (w.deadline !== null && w.deadline < deadline) deadline = w.deadline;
    switch (w.kind) {
      case "queue":
        for (const q of w.queues!) queues.add(q);
        break;
      case "retry":
        retrying = true;
        break;
      case "child":
        children.add(w.child!.id);
        break;
      case "sleep":
        break;
      default:
        assertNever(w.kind, "wait kind");
    }
    // A wait on several queues is recorded once per queue, so every reader shows each of them.
    for (const queue of w.queues ?? [undefined]) {
      waiting.push({
        kind: w.kind,
        entry: w.path,
        ...(queue ? { queue } : {}),
        ...(w.child ? { child: w.child.label } : {}),
        until: w.deadline,
      });
    }
  }
  const status = retrying ? "retrying" : queues.size || children.size ? "waiting" : "sleeping";
  const waitingJson = JSON.stringify(waiting);
  return {
    status,
    waiting: waitingJson,
    waitQueues: queues.size ? `|${[...queues].join("|")}|` : null,
    waitRuns: children.size ? `|${[...children].join("|")}|` : null,
    wakeAt: Number.isFinite(deadline) ? deadline : null,
  };
}
