// review_approvals: the runs waiting for a message on a queue (approvals and other decisions), each with the
// JSON Schema the message must match, so a person can answer them one by one; its MCP Apps view draws each
// wait's form (the inspector's, built from that schema) with Approve and Reject. A wait on several queues
// (ctx.queue.next with a list) is one wait with a schema per queue; a batch (ctx.queue.nextBatch) says how
// many of its messages have arrived.

import { z } from "zod";
import { actionLine, call } from "../../diagnosis/index.js";
import { encodeCursor } from "../../engine/cursor.js";
import type { RunInfo, WaitInfo } from "../../engine/views.js";
import { SHOWN_QUEUES } from "../../format.js";
import { APPROVALS_VIEW_URI } from "../apps/uris.js";
import { fitAnswer, fitItems } from "../budget.js";
import type { McpContext } from "../context.js";
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
  queue: z
    .string()
    .describe("Queue the message goes to (send_message's queue); for a wait on several queues, the first."),
  queues: z
    .array(
      z.object({
        queue: z.string().describe("A queue the wait takes its message from."),
        messageSchema: z.unknown().describe("JSON Schema a message on it must match, or null."),
      }),
    )
    .describe(
      `The queues the wait takes a message from (the first to arrive on any answers it), in order: the first ${SHOWN_QUEUES}.`,
    ),
  moreQueues: z
    .number()
    .optional()
    .describe(`Queues of the wait past the first ${SHOWN_QUEUES} (see get_run).`),
  batch: z
    .object({
      count: z.number().describe("Messages the batch waits for (ctx.queue.nextBatch's count)."),
      arrived: z.number().describe("How many have arrived so far."),
    })
    .nullable()
    .describe("For a batch wait, how many of count have arrived; null for a wait on one message."),
  until: z.string().nullable().describe("When the wait times out by itself (ISO), or null."),
  messageSchema: z
    .unknown()
    .describe("JSON Schema a message on queue must match, or null if none was published."),
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
    const waits: Wait[] = [];
    for (const run of page.runs) {
      for (const [entry, on] of queueWaits(run.waiting ?? [])) {
        // A wait on several queues is asked for by any of them, and then said whole.
        if (args.queue && !on.some((w) => w.queue === args.queue)) continue;
        const queues = [];
        for (const w of on.slice(0, SHOWN_QUEUES)) {
          const schema = await queueJsonSchema(ctx, run.workflow, run.version, w.queue!);
          queues.push({ queue: w.queue!, schema: schema ?? null });
        }
        const moreQueues = on.length - queues.length;
        waits.push({ run, wait: on[0]!, entry, queues, moreQueues, batch: await batchOf(ctx, run, entry) });
      }
    }
    const canAnswer = ctx.offers("send_message");
    /** The calls answering the first waits shown (never one the answer left out). */
    const nextActionsFor = (shown: Wait[]) =>
      ctx
        .forServer(
          shown.slice(0, 3).map(({ run, queues }) =>
            call(
              "send_message",
              {
                workflow: run.workflow,
                key: run.key,
                queue: queues[0]!.queue,
                body: "<matching messageSchema>",
              },
              `answer ${run.workflow}/${run.key}${queues.length > 1 ? ` (or on ${orList(queues.slice(1).map((q) => q.queue))})` : ""}`,
            ),
          ),
        )
        .map((a) => actionLine(a, false));
    return fitAnswer((s) => {
      const all = waits.map(({ run, wait, entry, queues, moreQueues, batch }) => {
        const uri = runUri(run.workflow, run.key);
        const schemas = queues.map((q) => ({
          queue: q.queue,
          messageSchema: s.value(q.schema, uri, "The run, whole"),
        }));
        return {
          workflow: run.workflow,
          key: run.key,
          version: run.version,
          entry,
          queue: schemas[0]!.queue,
          queues: schemas,
          ...(moreQueues > 0 ? { moreQueues } : {}),
          batch,
          until: iso(wait.until),
          messageSchema: schemas[0]!.messageSchema,
          input: s.value(run.input, uri, "The run, whole"),
          state: s.value(run.state, uri, "The run, whole"),
          createdAt: iso(run.createdAt)!,
        };
      });
      const approvals = fitItems(all, 15_000);
      const more = approvals.length < all.length;
      // Waits that did not fit are the next page's: it starts after the last run shown whole.
      const nextCursor = more ? cursorAfterShown(waits, approvals.length) : page.nextCursor;
      const nextActions = nextActionsFor(waits.slice(0, approvals.length));
      const lines = approvals.length
        ? approvals.map(
            (a) =>
              `- ${a.workflow}/${a.key} waits in "${a.entry}" for ${waitsFor(a)}${a.until ? ` until ${a.until}` : " (no timeout)"}; input ${brief(a.input, 200)}; ${schemasLine(a.queues)}`,
          )
        : [
            `No run waits for a message${args.queue ? ` on queue "${args.queue}"` : ""}${args.workflow ? ` in workflow "${args.workflow}"` : ""} in this page.`,
          ];
      const head = `${approvals.length} wait(s) for a decision${more ? ` (of ${all.length}; the rest did not fit: ${nextCursor ? "pass nextCursor as cursor for them" : "ask with a smaller limit"})` : ""}${canAnswer ? "" : "; this server is read-only, so answer them with a writable server"}:`;
      return {
        text: [
          head,
          ...lines,
          ...(nextCursor && !more ? ["More runs: pass nextCursor as cursor."] : []),
          ...(nextActions.length ? [`Next: ${nextActions.join(" | ")}`] : []),
        ].join("\n"),
        structured: { approvals, canAnswer, nextCursor, nextActions },
      };
    });
  },
});

/**
 * The cursor of a page that starts after the last run whose waits are all among the first `shown`; null
 * when the first run's own waits did not all fit (a smaller answer cannot be had by paging).
 */
function cursorAfterShown(waits: Wait[], shown: number): string | null {
  const cut = waits[shown]!.run.id;
  for (let i = shown - 1; i >= 0; i--) {
    const run = waits[i]!.run;
    if (run.id !== cut) return encodeCursor([run.createdAt, run.id]);
  }
  return null;
}

interface Wait {
  run: RunInfo;
  /** The first of the wait's WaitInfos (its entry and timeout are the same on each). */
  wait: WaitInfo;
  entry: string;
  queues: Array<{ queue: string; schema: unknown }>;
  /** Queues past the first SHOWN_QUEUES. */
  moreQueues: number;
  batch: { count: number; arrived: number } | null;
}

/**
 * A run's queue waits by entry: a wait on several queues comes as one WaitInfo per queue with the same entry
 * (engine views.ts), and is one wait on any of them.
 */
function queueWaits(waiting: WaitInfo[]): Map<string, WaitInfo[]> {
  const byEntry = new Map<string, WaitInfo[]>();
  for (const w of waiting) {
    if (w.kind !== "queue" || !w.queue) continue;
    const seen = byEntry.get(w.entry);
    if (seen) seen.push(w);
    else byEntry.set(w.entry, [w]);
  }
  return byEntry;
}

/** A batch wait's count and how many of its messages arrived (its entry's detail), or null for ctx.queue.next. */
async function batchOf(
  ctx: McpContext,
  run: RunInfo,
  entry: string,
): Promise<{ count: number; arrived: number } | null> {
  // The run may have moved on since it was listed: then its entry says nothing of a batch here.
  const detail = await ctx.engine.entry(run.id, entry).then(
    (e) => e.detail,
    () => undefined,
  );
  if (typeof detail?.count !== "number") return null;
  return { count: detail.count, arrived: Array.isArray(detail.messageIds) ? detail.messageIds.length : 0 };
}

/** '"a"', '"a" or "b"', '"a", "b" or "c"'. */
function orList(names: string[]): string {
  const quoted = names.map((n) => `"${n}"`);
  return quoted.length > 1 ? `${quoted.slice(0, -1).join(", ")} or ${quoted.at(-1)}` : (quoted[0] ?? "");
}

/** 'a message on "approve" or "reject"', 'a batch of 3 messages on "items" (1 of 3 arrived)'. */
function waitsFor(a: {
  queues: Array<{ queue: string }>;
  moreQueues?: number;
  batch: { count: number; arrived: number } | null;
}) {
  const on = `${orList(a.queues.map((q) => q.queue))}${a.moreQueues ? ` and ${a.moreQueues} more queues` : ""}`;
  return a.batch
    ? `a batch of ${a.batch.count} message${a.batch.count === 1 ? "" : "s"} on ${on} (${a.batch.arrived} of ${a.batch.count} arrived)`
    : `a message on ${on}`;
}

/** "schema {...}" for one queue; 'schema of "approve" {...}; schema of "reject" {...}' for several. */
function schemasLine(queues: Array<{ queue: string; messageSchema: unknown }>): string {
  if (queues.length === 1) return `schema ${brief(queues[0]!.messageSchema, 300)}`;
  return queues.map((q) => `schema of "${q.queue}" ${brief(q.messageSchema, 300)}`).join("; ");
}
