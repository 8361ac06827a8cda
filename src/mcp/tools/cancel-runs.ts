// cancel_runs: cancel many unfinished runs, chosen by failure signature, workflow, status, tags, keys or time; a dry
// run (the default) pins them in a plan, a real call with the plan cancels exactly those.

import { bulkHandler, bulkOutput, planShape, selectorShape } from "./bulk-selector.js";
import { defineTool } from "./tool.js";

export const cancelRuns = defineTool({
  name: "cancel_runs",
  title: "Cancel many runs",
  description:
    'Cancels many unfinished runs at once (e.g. every run still retrying with one list_failures signature, or status ["waiting"] of a workflow, or every run tagged customer c-9): each ends as cancelled, as cancel_run does, its history kept. Without plan it is a dry run that changes nothing: it answers the count, the runs by signature, samples, the runs that would be refused (already finished) and a plan token that pins exactly these runs. Show that to the user; then call again with only { plan } to do it (the user is asked to confirm when the client supports it): it acts in batches with progress notifications, never on runs that match later, and answers how many were cancelled, refused and skipped. A plan expires 15 minutes after its dry run unless started; calling again with the same plan carries on an interrupted one and does nothing more once finished.',
  input: { ...selectorShape, ...planShape },
  output: bulkOutput,
  annotations: {
    title: "Cancel many runs",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: true,
    openWorldHint: false,
  },
  write: true,
  handler: (args, ctx, extra) => bulkHandler("cancel", args, ctx, extra),
});
