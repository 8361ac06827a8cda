// review_approvals: the runs waiting for a message on a queue (approvals and other decisions), each with the
// JSON Schema the message must match, so a person can answer them one by one; its MCP Apps view draws each
// wait's form (the inspector's, built from that schema) with Approve and Reject.

import { z } from "zod";
import { actionLine, call } from "../../diagnosis/index.js";
import type { RunInfo, WaitInfo } from "../../engine/views.js";
import { APPROVALS_VIEW_URI } from "../apps/uris.js";
import { fitAnswer, fitItems } from "../budget.js";
import { brief, iso } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { runUri } from "../uris.js";
import { queueJsonSchema } from "./get-run.js";
import { defineTool, READ_ONLY } from "./tool.js";

const approvalShape = z.object({
  workflow: z.string().describe("Workflow name."),
  key: z.string().describe("Run key."),
  version: z.number().describe("Workflow version the run is pinned to."),
  entry: z.string().describe("Path of the queue-wait entry that waits."),
  queue: z.string().describe("Queue the message goes to (send_message's queue)."),
  until: z.string().nullable().describe("When the wait times out by itself (ISO), or null."),
  messageSchema: z.unknown().describe("JSON Schema the message must match, or null if none was published."),
  input: z.unknown().describe("The run's input (what is to be decided)."),
  state: z.unknown().describe("The run's current state."),
  createdAt: z.string().describe("When the run started (ISO)."),
});

export const reviewApprovals = defineTool({
  name: "review_approvals",
  title: "Review pending approvals",
  description:
    "Lists the runs that wait for a person's decision: every run waiting for a message on a queue (optionally of one workflow or one queue), newest first, each with what it waits in, when the wait times out, the run's input and state, and the JSON Schema the answer must match. Answer one with send_message (its workflow, key and queue, a body matching messageSchema, an idempotencyKey). Hosts with MCP Apps show each as a form with Approve and Reject. Pass nextCursor back as cursor for more.",
  input: {
    workflow: bounded(LIMITS.name, "workflow")
      .optional()
      .describe("Only runs of this workflow (exact name, see list_workflows)."),
    queue: bounded(LIMITS.name, "queue").optional().describe("Only waits on this queue."),
    limit: z.number().int().min(1).max(50).default(10).describe("Most runs to look at in this page (1-50)."),
    cursor: bounded(LIMITS.cursor, "cursor").optional().describe("nextCursor of the previous page."),
  },
  output: {
    approvals: z.array(approvalShape).describe("The waits to answer, newest run first."),
    canAnswer: z
      .boolean()
      .describe("True when this server offers send_message; false on a read-only server (answer elsewhere)."),
    nextCursor: z.string().nullable().describe("Pass as cursor for the next page; null on the last page."),
    nextActions: z.array(z.string()).describe('Suggested next tool calls ("tool {args}") or person steps.'),
  },
  annotations: { ...READ_ONLY, title: "Review pending approvals" },
  write: false,
  view: { resourceUri: APPROVALS_VIEW_URI },
  async handler(args, ctx) {
    // A cursor this server did not hand out is refused by the engine as a domain error, as in list_runs.
    const page = await ctx.engine.listRuns({
      status: ["waiting"],
      limit: args.limit,
      ...(args.workflow ? { workflow: args.workflow } : {}),
      ...(args.cursor ? { cursor: args.cursor } : {}),
    });
    const waits: Array<{ run: RunInfo; wait: WaitInfo; queue: string; schema: unknown }> = [];
    for (const run of page.runs) {
      for (const w of run.waiting ?? []) {
        if (w.kind !== "queue" || !w.queue || (args.queue && w.queue !== args.queue)) continue;
        const schema = await queueJsonSchema(ctx, run.workflow, run.version, w.queue);
        waits.push({ run, wait: w, queue: w.queue, schema: schema ?? null });
      }
    }
    const canAnswer = ctx.offers("send_message");
    const suggested = waits
      .slice(0, 3)
      .map(({ run, queue }) =>
        call(
          "send_message",
          { workflow: run.workflow, key: run.key, queue, body: "<matching messageSchema>" },
          `answer ${run.workflow}/${run.key}`,
        ),
      );
    const nextActions = ctx.forServer(suggested).map((a) => actionLine(a, false));
    return fitAnswer((s) => {
      const all = waits.map(({ run, wait, queue, schema }) => {
        const uri = runUri(run.workflow, run.key);
        return {
          workflow: run.workflow,
          key: run.key,
          version: run.version,
          entry: wait.entry,
          queue,
          until: iso(wait.until),
          messageSchema: s.value(schema, uri, "The run, whole"),
          input: s.value(run.input, uri, "The run, whole"),
          state: s.value(run.state, uri, "The run, whole"),
          createdAt: iso(run.createdAt)!,
        };
      });
      const approvals = fitItems(all, 15_000);
      const more = approvals.length < all.length;
      const lines = approvals.length
        ? approvals.map(
            (a) =>
              `- ${a.workflow}/${a.key} waits in "${a.entry}" for a message on "${a.queue}"${a.until ? ` until ${a.until}` : " (no timeout)"}; input ${brief(a.input, 200)}; schema ${brief(a.messageSchema, 300)}`,
          )
        : [
            `No run waits for a message${args.queue ? ` on queue "${args.queue}"` : ""}${args.workflow ? ` in workflow "${args.workflow}"` : ""} in this page.`,
          ];
      const head = `${approvals.length} wait(s) for a decision${more ? ` (of ${all.length}; the rest did not fit: ask with a smaller limit)` : ""}${canAnswer ? "" : "; this server is read-only, so answer them with a writable server"}:`;
      return {
        text: [
          head,
          ...lines,
          ...(page.nextCursor ? ["More runs: pass nextCursor as cursor."] : []),
          ...(nextActions.length ? [`Next: ${nextActions.join(" | ")}`] : []),
        ].join("\n"),
        structured: { approvals, canAnswer, nextCursor: page.nextCursor, nextActions },
      };
    });
  },
});
