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
    "Cancels a run: a running step is aborted, waits and timers are dropped, and the run ends as cancelled (its history is kept; replay_run can run it again). When another process executes the run, the cancel is requested and that process carries it out within a fraction of a second. A finished run is left as it is. Ask the user before cancelling runs they did not ask you to stop.",
  input: runAddress,
  output: {
    outcome: z
      .enum(["cancelled", "requested", "already-finished"])
      .describe(
        "cancelled: done; requested: the owning process will cancel it; already-finished: nothing to do.",
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
    const result = await ctx.engine.cancel(row.id, { by: "an MCP client (cancel_run)" });
    const now = (await ctx.engine.getRun(row.id))?.status ?? row.status;
    const outcome =
      result === "requested" ? "requested" : result === "cancelled" ? "cancelled" : "already-finished";
    return fitAnswer(() => ({
      text:
        outcome === "requested"
          ? `Cancel of ${label} requested: the process executing it will stop it shortly (it is ${now} now). Confirm with wait_for_run.`
          : outcome === "cancelled"
            ? `Run ${label} is cancelled; its history is kept.`
            : `Run ${label} had already finished (${now}).`,
      structured: { outcome: outcome as "cancelled" | "requested" | "already-finished", status: now },
    }));
  },
});
