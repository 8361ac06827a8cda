// ctx.sleep, ctx.sleepUntil and ctx.queue.next: durable waits on time and on messages.

import { InvalidInputError, UnknownQueueError } from "../errors.js";
import { ATTR } from "../observability/tracing.js";
import { type Duration, toMs } from "./duration.js";
import { detailOf, entryPath, setDetail } from "./entries.js";
import type { RunExecution } from "./execution.js";
import type { Scope } from "./history.js";

/** Sleeps until `until` (ms since epoch) or for `duration`; the deadline is fixed when first reached. */
export async function runSleep(
  exec: RunExecution,
  scope: Scope,
  name: string,
  at: { duration?: Duration; until?: Date | number },
): Promise<void> {
  const { ordinal, recorded } = exec.slot(scope, name, "sleep");
  if (recorded?.status === "completed") return;
  const clock = exec.core.clock;
  const row = recorded ?? exec.newEntry(scope, ordinal, name, "sleep", "waiting");
  let detail = recorded ? detailOf(recorded) : undefined;
  if (!detail) {
    detail = {
      until:
        at.until !== undefined
          ? toTime(at.until, name)
          : clock.now() + toMs(at.duration!, `duration of sleep "${name}"`),
    };
    setDetail(row, detail);
    exec.write(row);
  }
  const path = entryPath(scope.path, name);
  if (detail.until > clock.now()) await exec.wait({ kind: "sleep", deadline: detail.until, scope, path });
  exec.check(scope);
  row.status = "completed";
  row.endedAt = clock.now();
  exec.core.metrics.late("sleep", (row.endedAt - detail.until) / 1000);
  exec.trace?.wait("sleep", path, row.startedAt ?? row.endedAt, row.endedAt, { [ATTR.outcome]: "completed" });
  await exec.commitEntry(row);
}

function toTime(at: Date | number, name: string): number {
  const t = at instanceof Date ? at.getTime() : at;
  if (typeof t !== "number" || !Number.isFinite(t)) {
    throw new InvalidInputError(
      `sleepUntil("${name}", at) needs a Date or a time in milliseconds since the epoch, got ${String(at)}.`,
    );
  }
  return t;
}

/** Waits for the next message on a queue; resolves null once `timeout` passes without one. */
export async function runQueueNext(
  exec: RunExecution,
  scope: Scope,
  name: string,
  options: { queue: string; timeout?: Duration },
): Promise<unknown> {
  const queue = options?.queue;
  const known = Object.keys(exec.def.queues);
  if (typeof queue !== "string" || !known.includes(queue)) {
    exec.check(scope);
    throw new UnknownQueueError(exec.workflow, String(queue), known);
  }
  const { ordinal, recorded } = exec.slot(scope, name, "queue");
  if (recorded?.status === "completed") {
    return detailOf(recorded)?.timedOut ? null : JSON.parse(recorded.output ?? "null");
  }
  const clock = exec.core.clock;
  const row = recorded ?? exec.newEntry(scope, ordinal, name, "queue", "waiting");
  let detail = recorded ? detailOf(recorded) : undefined;
  if (!detail) {
    const timeout =
      options.timeout === undefined ? null : toMs(options.timeout, `timeout of queue wait "${name}"`);
    detail = { queue, until: timeout === null ? null : clock.now() + timeout };
    setDetail(row, detail);
    exec.write(row);
  }
  const path = entryPath(scope.path, name);
  for (;;) {
    exec.check(scope);
    const message = exec.takeMessage(queue);
    if (message) {
      detail.messageId = message.id;
      detail.sentAt = message.sentAt;
      setDetail(row, detail);
      row.output = message.body;
      row.status = "completed";
      row.endedAt = clock.now();
      exec.trace?.wait("queue", path, row.startedAt ?? row.endedAt, row.endedAt, {
        [ATTR.queue]: queue,
        [ATTR.outcome]: "message",
      });
      exec.core.writes.consume(message.id, exec.id, row.seq);
      await exec.commitEntry(row);
      return JSON.parse(message.body);
    }
    if (detail.until !== null && detail.until <= clock.now()) {
      detail.timedOut = true;
      setDetail(row, detail);
      row.status = "completed";
      row.endedAt = clock.now();
      exec.core.metrics.late("queue-timeout", (row.endedAt - detail.until) / 1000);
      exec.trace?.wait("queue", path, row.startedAt ?? row.endedAt, row.endedAt, {
        [ATTR.queue]: queue,
        [ATTR.outcome]: "timed-out",
      });
      await exec.commitEntry(row);
      return null;
    }
    await exec.wait({ kind: "queue", queue, deadline: detail.until, scope, path });
  }
}
