// ctx.sleep and ctx.sleepUntil: durable waits on time (queue waits are in queue-waits.ts).

import { InvalidInputError } from "../errors.js";
import { ATTR } from "../observability/tracing.js";
import { type Duration, toMs } from "./duration.js";
import { detailOf, entryPath, setDetail } from "./entries.js";
import type { RunExecution } from "./execution.js";
import type { Scope } from "./history.js";
import { describe } from "./query-input.js";

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
      `sleepUntil("${name}", at) needs a Date or a time in milliseconds since the epoch, got ${describe(at)}.`,
    );
  }
  return t;
}
