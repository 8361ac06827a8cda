// replay_runs: replay many failed runs after a fix, chosen by failure signature, workflow, status, tags, keys or time;
// a dry run (the default) pins them in a plan, a real call with the plan replays exactly those.

import { z } from "zod";
import { bulkHandler, bulkOutput, planShape, selectorShape } from "./bulk-selector.js";
import { defineTool } from "./tool.js";

export const replayRuns = defineTool({
  name: "replay_runs",
  title: "Replay many runs",
  description:
    "Replays many failed runs at once after their problem was fixed (e.g. every run of one list_failures signature, or of one customer by tags): each retries its failed step on the latest version, as replay_run does. Without plan it is a dry run that changes nothing: it answers the count, the runs by signature, up to ten samples with what each replay would discard and re-run, the runs that would be refused and why, and a plan token that pins exactly these runs. Show that to the user; then call again with only { plan } to do it (the user is asked to confirm when the client supports it): it acts on those runs in batches with progress notifications, never on runs that match later, and answers how many were replayed, refused (with reasons) and skipped. A plan expires 15 minutes after its dry run unless started; calling again with the same plan carries on an interrupted one and does nothing more once finished.",
  input: {
    ...selectorShape,
    version: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Dry run only: the workflow version the runs go on with. Default: the latest."),
    ...planShape,
  },
  output: bulkOutput,
  annotations: {
    title: "Replay many runs",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: true,
  },
  write: true,
  handler: (args, ctx, extra) => bulkHandler("replay", args, ctx, extra),
});
