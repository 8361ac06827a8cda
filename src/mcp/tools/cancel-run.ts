// cancel_run: stop a run for good (history kept); in attach mode the owning process carries it out.

import { z } from "zod";
import { TERMINAL_STATUSES } from "../../storage/store.js";
import { fitAnswer } from "../budget.js";
import { runAddress } from "./get-run.js";
import { defineTool } from "./tool.js";

export const cancelRun = defineTool({
  name: "cancel_run",
  title: "Cancel a run",
  description:
    "Cancels a run: a running step is aborted, waits and timers are dropped, and the run ends as cancelled (its history is kept; replay_run can run it again). When another process executes the run, the cancel is requested and that process carries it out within a fraction of a second. A finished run is left as it is. With rollback: true, the rollback handlers of its completed steps run first (latest first; the run is rolling-back meanwhile, then cancelled, or failed if a handler fails); without it nothing is undone. Ask the user before cancelling runs they did not ask you to stop.",
  input: {
    ...runAddress,
    rollback: z
      .boolean()
      .optional()
      .describe(
        "Undo the run's completed steps that carry a rollback handler before it ends cancelled (default false: nothing is undone).",
      ),
  },
  output: {
    outcome: z
      .enum(["cancelled", "rolling-back", "requested", "already-finished"])
      .describe(
        "cancelled: done; rolling-back: its handlers run now, then it ends cancelled (wait_for_run); requested: the owning process will cancel it; already-finished: nothing to do.",
      ),
    status: z.string().describe("The run's status now."),
  },
  annotations: {
    title: "Cancel a run",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  write: true,
  async handler(args, ctx) {
    const row = await ctx.run(args.workflow, args.key);
    const label = `${row.workflow}/${row.key}`;
    if (TERMINAL_STATUSES.includes(row.status)) {
      return fitAnswer(() => ({
        text: `Run ${label} is already ${row.status}; nothing was cancelled.`,
        structured: { outcome: "already-finished" as const, status: row.status },
      }));
    }
    const result = await ctx.engine.cancel(row.id, {
      by: "an MCP client (cancel_run)",
      rollback: args.rollback === true,
    });
    const now = (await ctx.engine.getRun(row.id))?.status ?? row.status;
    const outcome =
      result === "requested" || result === "cancelled" || result === "rolling-back"
        ? result
        : "already-finished";
    return fitAnswer(() => ({
      text:
        outcome === "requested"
          ? `Cancel of ${label}${args.rollback ? " with rollback" : ""} requested: the process executing it will ${args.rollback ? "undo its completed steps and " : ""}stop it shortly (it is ${now} now). Confirm with wait_for_run.`
          : outcome === "rolling-back"
            ? `Run ${label} is rolling back: the handlers of its completed steps run now, latest first, then it ends cancelled. Follow it with wait_for_run or get_run.`
            : outcome === "cancelled"
              ? `Run ${label} is cancelled; its history is kept.`
              : `Run ${label} had already finished (${now}).`,
      structured: { outcome, status: now },
    }));
  },
});
