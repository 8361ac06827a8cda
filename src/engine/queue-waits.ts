// ctx.queue.next: a durable wait for the first message on one queue or on any of several.

import { InvalidInputError, UnknownQueueError } from "../errors.js";
import { ATTR } from "../observability/tracing.js";
import { type Duration, toMs } from "./duration.js";
import { detailOf, entryPath, type QueueDetail, setDetail } from "./entries.js";
import type { RunExecution } from "./execution.js";
import type { Scope } from "./history.js";

/** The queues a wait names, checked against the workflow's; throws UnknownQueueError for one it lacks. */
export function waitQueues(exec: RunExecution, scope: Scope, name: string, queue: unknown): string[] {
  const known = Object.keys(exec.def.queues);
  const list = Array.isArray(queue) ? (queue as unknown[]) : [queue];
  if (Array.isArray(queue) && queue.length === 0) {
    exec.check(scope);
    throw new InvalidInputError(
      `ctx.queue.next("${name}") got an empty list of queues; name at least one of: ${known.join(", ")}.`,
    );
  }
  for (const q of list) {
    if (typeof q !== "string" || !known.includes(q)) {
      exec.check(scope);
      throw new UnknownQueueError(exec.workflow, String(q), known);
    }
  }
  return [...new Set(list as string[])];
}

/**
 * Waits for the next message on a queue, or on any of several (then resolves { queue, body }, the
 * earliest sent first); resolves null once `timeout` passes without one.
 */
export async function runQueueNext(
  exec: RunExecution,
  scope: Scope,
  name: string,
  options: { queue: string | readonly string[]; timeout?: Duration },
): Promise<unknown> {
  const queues = waitQueues(exec, scope, name, options?.queue);
  const multi = Array.isArray(options.queue);
  const answer = (queue: string | undefined, body: string | null) => {
    const value = JSON.parse(body ?? "null");
    return multi ? { queue, body: value } : value;
  };
  const { ordinal, recorded } = exec.slot(scope, name, "queue");
  if (recorded?.status === "completed") {
    const done = detailOf(recorded);
    return done?.timedOut ? null : answer(done?.received ?? done?.queue, recorded.output);
  }
  const clock = exec.core.clock;
  const row = recorded ?? exec.newEntry(scope, ordinal, name, "queue", "waiting");
  let detail = recorded ? detailOf(recorded) : undefined;
  if (!detail) {
    const timeout =
      options.timeout === undefined ? null : toMs(options.timeout, `timeout of queue wait "${name}"`);
    detail = { queue: queues[0]!, until: timeout === null ? null : clock.now() + timeout } as QueueDetail;
    if (multi) detail.queues = queues;
    setDetail(row, detail);
    exec.write(row);
  }
  const path = entryPath(scope.path, name);
  const label = queues.join(",");
  for (;;) {
    exec.check(scope);
    const message = exec.takeMessage(queues);
    if (message) {
      detail.messageId = message.id;
      detail.sentAt = message.sentAt;
      if (multi) detail.received = message.queue;
      setDetail(row, detail);
      row.output = message.body;
      row.status = "completed";
      row.endedAt = clock.now();
      exec.trace?.wait("queue", path, row.startedAt ?? row.endedAt, row.endedAt, {
        [ATTR.queue]: message.queue,
        [ATTR.outcome]: "message",
      });
      // The consumption goes in the same commit as the entry's record.
      exec.core.writes.consume(message.id, exec.id, row.seq);
      await exec.commitEntry(row);
      return answer(message.queue, message.body);
    }
    if (detail.until !== null && detail.until <= clock.now()) {
      detail.timedOut = true;
      setDetail(row, detail);
      row.status = "completed";
      row.endedAt = clock.now();
      exec.core.metrics.late("queue-timeout", (row.endedAt - detail.until) / 1000);
      exec.trace?.wait("queue", path, row.startedAt ?? row.endedAt, row.endedAt, {
        [ATTR.queue]: label,
        [ATTR.outcome]: "timed-out",
      });
      await exec.commitEntry(row);
      return null;
    }
    await exec.wait({ kind: "queue", queues, deadline: detail.until, scope, path });
  }
}
