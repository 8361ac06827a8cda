// wait_for_run: block (at most 50 s per call) until a run's status changes or it finishes, with progress.

import { z } from "zod";
import { TERMINAL_STATUSES } from "../../storage/store.js";
import { fitAnswer } from "../budget.js";
import { runStatusSchema, runSummary, runSummaryShape } from "../format.js";
import { runUri } from "../uris.js";
import { runAddress } from "./get-run.js";
import { defineTool } from "./tool.js";

const MAX_WAIT_S = 50;
const PROGRESS_EVERY_MS = 5000;

export const waitForRun = defineTool({
  name: "wait_for_run",
  title: "Wait for a run",
  description:
    'Waits until a run\'s status changes (until: "change", the default) or until it finishes (until: "finished"), for at most timeoutSeconds (50 at most per call; call again to wait longer). Sends progress notifications while it waits. Use it after send_message, start_run, replay_run or cancel_run to see what the run did next. Pass fromStatus (the status you last saw) so a change that happened between your calls is not missed. A run that is already finished (completed, failed or cancelled) and still in fromStatus returns at once with finished: true.',
  input: {
    ...runAddress,
    until: z
      .enum(["change", "finished"])
      .optional()
      .describe(
        '"change" (default): return on any status change. "finished": return when completed, failed or cancelled.',
      ),
    fromStatus: runStatusSchema
      .optional()
      .describe(
        "The status you last saw; a run already in another status returns at once. Default: its status now.",
      ),
    timeoutSeconds: z
      .number()
      .min(1)
      .max(MAX_WAIT_S)
      .optional()
      .describe(`Longest wait in seconds, 1-${MAX_WAIT_S} (default 30).`),
  },
  output: {
    status: runStatusSchema.describe("The run's status when the wait ended."),
    fromStatus: runStatusSchema.describe("The status the wait compared against."),
    changed: z.boolean().describe("True when the status differs from fromStatus."),
    finished: z.boolean().describe("True when the run is completed, failed or cancelled."),
    timedOut: z.boolean().describe("True when the wait ended because timeoutSeconds passed."),
    waitedMs: z.number().describe("How long the call waited."),
    run: z.object(runSummaryShape).describe("The run as it is now."),
  },
  annotations: {
    title: "Wait for a run",
    readOnlyHint: true,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: false,
  },
  write: false,
  async handler(args, ctx, extra) {
    const engine = ctx.engine;
    const row = await ctx.run(args.workflow, args.key);
    const until = args.until ?? "change";
    const from = (args.fromStatus ?? row.status) as typeof row.status;
    const timeoutMs = Math.round((args.timeoutSeconds ?? 30) * 1000);
    const started = engine.clock.now();
    const token = extra._meta?.progressToken;
    const progress = (message: string) => {
      if (token === undefined) return;
      const elapsed = Math.min(engine.clock.now() - started, timeoutMs);
      void extra
        .sendNotification({
          method: "notifications/progress",
          params: {
            progressToken: token,
            progress: Math.round(elapsed / 1000),
            total: timeoutMs / 1000,
            message,
          },
        })
        .catch(() => {});
    };
    const done = (status: typeof row.status) =>
      until === "finished" ? TERMINAL_STATUSES.includes(status) : status !== from;

    // A finished run does not change by itself: waiting for a change would only run out the timeout.
    if (TERMINAL_STATUSES.includes(row.status) && row.status === from) {
      const info = await engine.info(row.id);
      const label = `${info.workflow}/${info.key}`;
      const structured = {
        status: info.status,
        fromStatus: from,
        changed: info.status !== from,
        finished: TERMINAL_STATUSES.includes(info.status),
        timedOut: false,
        waitedMs: engine.clock.now() - started,
        run: runSummary(info, runUri(info.workflow, info.key)),
      };
      const restart = ctx.offers("replay_run")
        ? "unless it is replayed (replay_run)"
        : "unless it is replayed";
      const next =
        info.status === "failed"
          ? " diagnose_run says why it failed and what to do."
          : info.status === "completed"
            ? " get_run shows its output."
            : " get_run shows it whole.";
      return fitAnswer(() => ({
        text: `Run ${label} is already ${info.status}: it has finished and will not change ${restart}, so there is nothing to wait for; do not call wait_for_run again for it.${next}${structured.run.error ? ` Error: ${structured.run.error}` : ""}`,
        structured,
      }));
    }

    let lastStatus = row.status;
    progress(
      `waiting for ${row.workflow}/${row.key} (${row.status}) to ${until === "finished" ? "finish" : "change"}`,
    );
    // A heartbeat keeps the client informed (and its request alive) while nothing happens.
    const beat = setInterval(
      () => progress(`waiting; ${row.workflow}/${row.key} is ${lastStatus}`),
      PROGRESS_EVERY_MS,
    );
    const offEntries = engine.on((e) => {
      if (e.type === "entry" && e.runId === row.id && e.row.endedAt !== null) {
        progress(`"${e.row.name}" (${e.row.kind}) ${e.row.status}`);
      }
    });
    let final: { timedOut: boolean };
    try {
      const watched = await engine.watchRun(row.id, (now) => done(now.status), {
        timeout: timeoutMs,
        signal: extra.signal,
        onRead: (now) => {
          if (now.status === lastStatus) return;
          lastStatus = now.status;
          progress(`${row.workflow}/${row.key} is ${now.status}`);
        },
      });
      final = { timedOut: watched.reason !== "until" };
    } finally {
      clearInterval(beat);
      offEntries();
    }
    const info = await engine.info(row.id);
    const status = info.status;
    const structured = {
      status,
      fromStatus: from,
      changed: status !== from,
      finished: TERMINAL_STATUSES.includes(status),
      timedOut: final.timedOut,
      waitedMs: engine.clock.now() - started,
      run: runSummary(info, runUri(info.workflow, info.key)),
    };
    const label = `${info.workflow}/${info.key}`;
    return fitAnswer(() => ({
      text: final.timedOut
        ? `Run ${label} is still ${status} after ${Math.round(structured.waitedMs / 1000)} s. Call wait_for_run again (fromStatus "${from}") to keep waiting, or get_run to see what it waits on.`
        : `Run ${label} is now ${status} (was ${from}).${structured.run.waitingOn ? ` It waits for ${structured.run.waitingOn}.` : ""}${structured.run.error ? ` Error: ${structured.run.error}` : ""}`,
      structured,
    }));
  },
});
