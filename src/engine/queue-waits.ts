// ctx.queue.next: a durable wait for the first message on one queue or on any of several.

import { InvalidInputError, UnknownQueueError } from "../errors.js";
import { ATTR } from "../observability/tracing.js";
import { type Duration, toMs } from "./duration.js";
import { detailOf, type Entry, type EntryOf, entryPath, type QueueDetail, setDetail } from "./entries.js";
import type { RunExecution } from "./execution.js";
import type { Scope } from "./history.js";

/** Most distinct queues one ctx.queue.next may wait on (a wait names each in what it records and shows). */
export const MAX_WAIT_QUEUES = 100;

/** Most messages one ctx.queue.nextBatch may collect (its record holds each message's id). */
export const MAX_BATCH_COUNT = 1000;

/** A value as an error message shows it, its type named where its text would hide it ("10" is a string). */
function shown(value: unknown): string {
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)}`;
  if (typeof value === "number") return String(value);
  if (value === null || value === undefined) return String(value);
  return `a value of type ${Array.isArray(value) ? "array" : typeof value}`;
}

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
  const queues = [...new Set(list as string[])];
  if (queues.length > MAX_WAIT_QUEUES) {
    exec.check(scope);
    throw new InvalidInputError(
      `ctx.queue.next("${name}") names ${queues.length} queues, more than the ${MAX_WAIT_QUEUES} one wait may wait on. Wait on fewer queues: one queue whose messages carry a field that says which kind they are, say.`,
    );
  }
  return queues;
}

/** What a queue wait waits for, in words: the part of its identity that its kind and name do not carry. */
function shape(w: { queues: readonly string[]; multi: boolean; count: number | undefined }): string {
  if (w.count !== undefined) return `a batch of up to ${w.count} messages on ${JSON.stringify(w.queues[0])}`;
  return w.multi
    ? `the next message on any of ${JSON.stringify(w.queues)}`
    : `the next message on ${JSON.stringify(w.queues[0])}`;
}

/**
 * Throws HistoryDivergedError if the recorded wait at this position waited for something else: one message
 * where the code now asks for a batch (or the reverse), another batch size, another queue or set of queues,
 * or one queue where the code now names a list (its answer is { queue, body } then, not the body).
 */
function checkShape(
  exec: RunExecution,
  scope: Scope,
  ordinal: number,
  recorded: EntryOf<"queue"> | undefined,
  asked: { queues: readonly string[]; multi: boolean; count: number | undefined },
): void {
  const detail = recorded ? detailOf(recorded) : undefined;
  if (!recorded || !detail) return;
  const had = {
    queues: detail.queues ?? [detail.queue],
    multi: detail.queues !== undefined,
    count: detail.count,
  };
  const sameSet =
    had.queues.length === asked.queues.length && had.queues.every((q) => asked.queues.includes(q));
  if (sameSet && had.multi === asked.multi && had.count === asked.count) return;
  exec.diverge(
    scope,
    ordinal,
    recorded as Entry,
    { kind: "queue", name: recorded.name, shape: shape(asked) },
    shape(had),
  );
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
  checkShape(exec, scope, ordinal, recorded, { queues, multi, count: undefined });
  if (recorded?.status === "completed") {
    const done = detailOf(recorded);
    return done?.timedOut ? null : answer(done?.received ?? done?.queue, recorded.output);
  }
  // Rolling back (or verifying), the code only replays: a message waiting here is not taken.
  if (exec.holding) return exec.frontier();
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

/**
 * Waits for `count` messages on a queue, or for whatever arrived when `timeout` passes (possibly none),
 * and resolves their bodies in the order sent. Each message is consumed in the same commit that adds it to
 * the entry's record, so a crash never loses one nor hands it out twice, and a partial batch holds no
 * unconsumed message that would wake the suspended run at once.
 */
export async function runQueueBatch(
  exec: RunExecution,
  scope: Scope,
  name: string,
  options: { queue: string; count: number; timeout?: Duration },
): Promise<unknown[]> {
  if (Array.isArray(options?.queue)) {
    exec.check(scope);
    throw new InvalidInputError(
      `ctx.queue.nextBatch("${name}") takes one queue, got a list (${options.queue.join(", ")}). Name one queue.`,
    );
  }
  const queues = waitQueues(exec, scope, name, options?.queue);
  const count = options.count;
  if (!Number.isInteger(count) || count < 1 || count > MAX_BATCH_COUNT) {
    exec.check(scope);
    throw new InvalidInputError(
      typeof count === "number" && count > MAX_BATCH_COUNT
        ? `ctx.queue.nextBatch("${name}") asks for a batch of ${count} messages, more than the ${MAX_BATCH_COUNT} one batch may hold. Ask for at most ${MAX_BATCH_COUNT} (collect more in a ctx.loop of batches).`
        : `ctx.queue.nextBatch("${name}") needs count to be a whole number from 1 to ${MAX_BATCH_COUNT}, got ${shown(count)}.`,
    );
  }
  const { ordinal, recorded } = exec.slot(scope, name, "queue");
  checkShape(exec, scope, ordinal, recorded, { queues, multi: false, count });
  if (recorded?.status === "completed") return JSON.parse(recorded.output ?? "[]") as unknown[];
  if (exec.holding) return exec.frontier();
  const clock = exec.core.clock;
  const row = recorded ?? exec.newEntry(scope, ordinal, name, "queue", "waiting");
  let detail = recorded ? detailOf(recorded) : undefined;
  if (!detail) {
    const timeout =
      options.timeout === undefined ? null : toMs(options.timeout, `timeout of queue batch "${name}"`);
    detail = {
      queue: queues[0]!,
      until: timeout === null ? null : clock.now() + timeout,
      count,
      messageIds: [],
    };
    setDetail(row, detail);
    exec.write(row);
  }
  const ids = (detail.messageIds ??= []);
  const bodies: string[] = recorded?.output
    ? (JSON.parse(recorded.output) as unknown[]).map((b) => JSON.stringify(b))
    : [];
  const path = entryPath(scope.path, name);
  for (;;) {
    exec.check(scope);
    let took = false;
    while (ids.length < count) {
      const message = exec.takeMessage(queues);
      if (!message) break;
      ids.push(message.id);
      bodies.push(message.body);
      exec.core.writes.consume(message.id, exec.id, row.seq);
      took = true;
    }
    row.output = `[${bodies.join(",")}]`;
    const full = ids.length >= count;
    if (full || (detail.until !== null && detail.until <= clock.now())) {
      if (!full) detail.timedOut = true;
      setDetail(row, detail);
      row.status = "completed";
      row.endedAt = clock.now();
      exec.trace?.wait("queue", path, row.startedAt ?? row.endedAt, row.endedAt, {
        [ATTR.queue]: queues[0]!,
        [ATTR.outcome]: full ? "message" : "timed-out",
      });
      await exec.commitEntry(row);
      return JSON.parse(row.output) as unknown[];
    }
    if (took) {
      // The messages taken so far and the entry's record of them, in one commit.
      setDetail(row, detail);
      await exec.commitEntry(row);
    }
    await exec.wait({ kind: "queue", queues, deadline: detail.until, scope, path });
  }
}
