// get_run: one run's status, input, state, output, what it waits on, its last error and its counts.

import { z } from "zod";
import { actionLine, call, type NextAction } from "../../diagnosis/index.js";
import { WAIT_KINDS, type WaitKind } from "../../engine/entries.js";
import { rollbackSummary } from "../../engine/rollback-summary.js";
import { groupWaits } from "../../engine/views.js";
import { SHOWN_QUEUES } from "../../format.js";
import { RUN_VIEW_URI } from "../apps/uris.js";
import { fitAnswer } from "../budget.js";
import type { McpContext } from "../context.js";
import { brief, errorLine, iso, runStatusSchema, waitText } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { tagsOutput, tagsText } from "../tags.js";
import { historyUri, runUri, stateUri } from "../uris.js";
import { whoLine } from "./list-audit.js";
import { defineTool, READ_ONLY } from "./tool.js";

export const runAddress = {
  workflow: bounded(LIMITS.name, "workflow").describe("Workflow name (see list_workflows)."),
  key: bounded(LIMITS.key, "key").describe("Run key (see list_runs). Case-sensitive."),
};

/** The JSON Schema of a queue of a run's workflow, if known here. */
export async function queueJsonSchema(ctx: McpContext, workflow: string, version: number, queue: string) {
  const meta = (await ctx.engine.published()).get(`${workflow}@${version}`);
  return meta?.queues[queue];
}

/** The newest writes to a run in the audit (made through any surface), with their count and the call for all. */
async function runWrites(ctx: McpContext, workflow: string, key: string) {
  const filter = { workflow, key };
  const [page, count] = await Promise.all([
    ctx.engine.audit.list({ ...filter, limit: 3 }),
    ctx.engine.audit.count(filter),
  ]);
  return {
    count,
    latest: page.entries.map((e) => ({
      id: e.id,
      at: e.at,
      action: e.action,
      by: whoLine(e),
      outcome: e.outcome.ok ? "ok" : e.outcome.code,
    })),
    more: `list_audit ${JSON.stringify(filter)}`,
  };
}

export const getRun = defineTool({
  name: "get_run",
  title: "Get a run",
  description:
    "Shows one run: status, version, tags, input, current state, output, the last error (with stack), what it waits on (for a queue wait, the JSON Schema the message must match), counts of history entries by status, the failed entry, pending messages, and suggested next tool calls. Use it after list_runs, or to check on a run you know. For the step-by-step record use get_history; for one entry whole, get_step.",
  input: runAddress,
  output: {
    workflow: z.string().describe("Workflow name."),
    key: z.string().describe("Run key."),
    status: runStatusSchema.describe("Run status."),
    version: z.number().describe("Workflow version the run is pinned to."),
    tags: tagsOutput,
    input: z.unknown().describe("The run's input."),
    state: z.unknown().describe("The run's current state."),
    output: z.unknown().describe("The result of a completed run, else null."),
    error: z
      .object({
        name: z.string(),
        message: z.string(),
        code: z.string().optional(),
        stack: z.string().optional(),
      })
      .passthrough()
      .nullable()
      .describe("Why the run failed, or null."),
    waiting: z
      .array(
        z.object({
          kind: z.enum(WAIT_KINDS).describe("What kind of wait."),
          entry: z.string().describe("Path of the waiting entry."),
          queue: z.string().optional().describe("Queue a message is awaited on."),
          child: z.string().optional().describe('Child run awaited ("workflow/key").'),
          until: z.string().nullable().describe("When the wait ends by itself (timeout, timer), or null."),
          messageSchema: z.unknown().optional().describe("JSON Schema a message on that queue must match."),
          queues: z
            .array(
              z.object({
                queue: z.string(),
                messageSchema: z.unknown().optional().describe("JSON Schema a message on it must match."),
              }),
            )
            .optional()
            .describe(
              `A wait on several queues (one wait, \`queue\` its first): the first ${SHOWN_QUEUES} it names, each with its schema.`,
            ),
          moreQueues: z
            .number()
            .optional()
            .describe(
              "Queues of a wait on several that `queues` does not list (the run resource has them all).",
            ),
        }),
      )
      .describe("What the run waits on; empty when it does not wait."),
    executing: z.boolean().describe("True when a process holds the run's lease and executes it now."),
    parent: z
      .object({ workflow: z.string(), key: z.string(), status: runStatusSchema })
      .nullable()
      .describe("The run that started this one with ctx.child, or null."),
    children: z
      .array(
        z.object({
          workflow: z.string(),
          key: z.string(),
          status: runStatusSchema,
          entry: z.string().nullable().describe("Path of this run's ctx.child entry that started it."),
          detached: z.boolean().describe("Started with detach: this run does not wait for it."),
        }),
      )
      .describe(
        "Runs this run started with ctx.child, oldest first (get_run or diagnose_run them by address).",
      ),
    writes: z
      .object({
        count: z
          .number()
          .describe("Writes recorded against this run (MCP, inspector, CLI), refused ones too."),
        latest: z
          .array(
            z.object({
              id: z.number().describe("The write's id in the audit."),
              at: z.string().describe("When (ISO)."),
              action: z.string().describe("The tool or action."),
              by: z.string().describe("Surface and client, in a few words."),
              outcome: z.string().describe('"ok", or the error code of a refused write.'),
            }),
          )
          .describe("The newest few, newest first."),
        more: z.string().describe("The list_audit call that lists them all."),
      })
      .describe("Writes made to this run (the audit)."),
    concurrency: z
      .object({
        key: z.string().describe('The run\'s concurrency key value ("" for a per-workflow limit).'),
        limit: z.number().describe("How many runs of this key may execute at once."),
        label: z.string().describe('What a key value is (e.g. "customer").'),
        holding: z
          .boolean()
          .describe("True while this run holds one of the key's slots (running or retrying)."),
        queued: z.boolean().describe("True while this run waits, pending, for a slot of its key."),
        holders: z
          .array(z.object({ workflow: z.string(), key: z.string(), status: runStatusSchema }))
          .describe("Other runs holding the key's slots now, oldest first (at most 20)."),
        holderCount: z.number().describe("How many other runs hold the key's slots."),
        ahead: z.number().describe("Older runs of the key queued for a slot before this one."),
        text: z
          .string()
          .nullable()
          .describe('"queued behind 2 runs of customer c-9 (...)" while queued, else null.'),
      })
      .nullable()
      .describe(
        "The run's concurrency limit (workflow({ concurrency })), or null when its workflow has none.",
      ),
    createdAt: z.string().describe("ISO time."),
    updatedAt: z.string().describe("ISO time."),
    finishedAt: z.string().nullable().describe("ISO time, or null."),
    counts: z
      .object({
        entries: z.number().describe("History entries."),
        byStatus: z.record(z.string(), z.number()).describe("Entries by status."),
        pendingMessages: z.number().describe("Messages sent and not yet consumed."),
      })
      .describe("How much history and mail the run has."),
    failedEntry: z.string().nullable().describe("Path of the latest failed entry, if any (see get_step)."),
    rollback: z
      .object({
        failedAt: z.string().nullable().describe("Path of the step the run failed at, or null."),
        total: z.number().describe("Completed steps that carry a rollback handler."),
        undone: z.array(z.string()).describe("Steps undone, in the order they were undone."),
        notUndone: z.array(z.string()).describe("Steps with a handler not undone, the next to undo first."),
        failed: z
          .object({
            step: z.string().describe("Path of the step whose handler failed."),
            error: z.string().describe("The handler's last error, as name: message."),
          })
          .nullable()
          .describe("The step whose rollback handler failed after its retries, or null."),
        text: z.string().describe("The rollback in one sentence."),
      })
      .nullable()
      .describe(
        "What the rollback of a failed, cancelled or rolling-back run undid and did not; null without handlers.",
      ),
    pendingMessages: z
      .array(z.object({ id: z.number(), queue: z.string(), sentAt: z.string() }))
      .describe("The first unconsumed messages."),
    uris: z
      .object({ run: z.string(), history: z.string(), state: z.string() })
      .describe("Resources of this run (subscribe to follow it)."),
    nextActions: z
      .array(z.string())
      .describe(
        'Suggested next tool calls ("tool {args}"); a "(person) ..." item is something only the user can do, e.g. a write this read-only server does not offer.',
      ),
  },
  annotations: { ...READ_ONLY, title: "Get a run" },
  write: false,
  view: { resourceUri: RUN_VIEW_URI },
  async handler(args, ctx) {
    const row = await ctx.run(args.workflow, args.key);
    const info = await ctx.engine.info(row.id);
    const entries = await ctx.engine.history(row.id, { limit: 10_000 });
    const byStatus: Record<string, number> = {};
    for (const e of entries) byStatus[e.status] = (byStatus[e.status] ?? 0) + 1;
    const failed = entries.filter((e) => e.status === "failed").at(-1) ?? null;
    const rollback = rollbackSummary(entries, info.status, info.error);
    const pending = await ctx.engine.listMessages(row.id, { limit: 100 });
    const writes = await runWrites(ctx, row.workflow, row.key);
    const waiting: Array<{
      kind: WaitKind;
      entry: string;
      queue?: string;
      child?: string;
      until: string | null;
      messageSchema?: unknown;
      queues?: Array<{ queue: string; messageSchema?: unknown }>;
      moreQueues?: number;
    }> = [];
    const schemaOf = async (queue: string) => {
      const schema = await queueJsonSchema(ctx, info.workflow, info.version, queue);
      return schema !== undefined ? { messageSchema: schema } : {};
    };
    // A wait on several queues is one wait: its first queues each with their schema, the rest counted.
    for (const w of groupWaits(info.waiting)) {
      const queues = w.queues
        ? await Promise.all(
            w.queues.slice(0, SHOWN_QUEUES).map(async (q) => ({ queue: q, ...(await schemaOf(q)) })),
          )
        : undefined;
      waiting.push({
        kind: w.kind,
        entry: w.entry,
        ...(w.queue ? { queue: w.queue } : {}),
        ...(w.child ? { child: w.child } : {}),
        until: iso(w.until),
        ...(w.queue && !w.queues ? await schemaOf(w.queue) : {}),
        ...(queues ? { queues } : {}),
        ...(w.queues && w.queues.length > SHOWN_QUEUES ? { moreQueues: w.queues.length - SHOWN_QUEUES } : {}),
      });
    }
    const { workflow, key } = info;
    const address = { workflow, key };
    const suggested: NextAction[] = [];
    for (const w of waiting) {
      if (w.kind !== "queue") continue;
      // A wait on several queues: a call for each of its first three (any of them wakes it).
      for (const q of w.queues?.slice(0, 3).map((x) => x.queue) ?? [w.queue!])
        suggested.push(
          call(
            "send_message",
            { ...address, queue: q, body: "<matching messageSchema>" },
            `answer the wait on queue "${q}"${w.queues ? ` (any of its ${w.queues.length + (w.moreQueues ?? 0)} queues wakes it)` : ""}`,
          ),
        );
    }
    const concurrency = await ctx.engine.concurrency(row.id);
    if (concurrency?.queued) {
      for (const h of concurrency.holders.slice(0, 2)) {
        suggested.push(
          call("get_run", { workflow: h.workflow, key: h.key }, `see a run holding the slot it waits for`),
        );
      }
    }
    const family = await ctx.engine.family(row.id);
    const parent = family.parent
      ? { workflow: family.parent.workflow, key: family.parent.key, status: family.parent.status }
      : null;
    const children = family.children.map((c) => ({
      workflow: c.workflow,
      key: c.key,
      status: c.status,
      entry: c.entry,
      detached: c.detached,
    }));
    for (const c of children.filter((c) => c.status === "failed" || c.status === "cancelled").slice(0, 5)) {
      suggested.push(
        call(
          "diagnose_run",
          { workflow: c.workflow, key: c.key },
          `see why child run ${c.workflow}/${c.key} ${c.status}`,
        ),
      );
    }
    if (info.status === "failed") {
      if (failed) suggested.push(call("get_step", { ...address, step: failed.path }, "see the failed entry"));
      suggested.push(call("replay_run", { ...address, dryRun: true }, "preview a replay"));
    }
    if (entries.length) suggested.push(call("get_history", address, "see the step-by-step record"));
    // Calls to tools this server hides (read-only) become a note for a person.
    const nextActions = ctx.forServer(suggested).map((a) => actionLine(a, false));
    const executing = info.owner !== null && (info.leaseUntil ?? 0) > ctx.engine.clock.now();
    const uris = {
      run: runUri(workflow, key),
      history: historyUri(workflow, key),
      state: stateUri(workflow, key),
    };
    return fitAnswer((s) => {
      const error = info.error ? s.error(info.error, uris.run, "The run, whole") : null;
      const structured = {
        workflow,
        key,
        status: info.status,
        version: info.version,
        tags: info.tags,
        input: s.value(info.input, uris.run, "The run, whole"),
        state: s.value(info.state, uris.state, "The run's state"),
        output: s.value(info.output, uris.run, "The run, whole"),
        error,
        waiting: waiting.map((w) => ({
          ...w,
          ...(w.messageSchema === undefined
            ? {}
            : { messageSchema: s.value(w.messageSchema, uris.run, "The run, whole") }),
          ...(w.queues
            ? {
                queues: w.queues.map((q) =>
                  q.messageSchema === undefined
                    ? q
                    : { ...q, messageSchema: s.value(q.messageSchema, uris.run, "The run, whole") },
                ),
              }
            : {}),
        })),
        executing,
        parent,
        concurrency,
        // The first 100 (the text counts them all): engine.family or the inspector has the rest.
        children: children.slice(0, 100),
        createdAt: iso(info.createdAt)!,
        updatedAt: iso(info.updatedAt)!,
        finishedAt: iso(info.finishedAt),
        counts: { entries: entries.length, byStatus, pendingMessages: pending.length },
        writes,
        failedEntry: failed?.path ?? null,
        rollback,
        pendingMessages: pending
          .slice(0, 10)
          .map((m) => ({ id: m.id, queue: m.queue, sentAt: iso(m.sentAt)! })),
        uris,
        nextActions,
      };
      const lines = [
        `Run ${workflow}/${key}: ${info.status} (v${info.version}${executing ? ", executing now" : ""}), created ${structured.createdAt}, ${entries.length} entries${failed ? `, failed entry "${failed.path}"` : ""}.`,
      ];
      if (Object.keys(info.tags).length) lines.push(`Tags: ${tagsText(info.tags)}.`);
      if (parent) lines.push(`Started by ${parent.workflow}/${parent.key} (${parent.status}).`);
      if (children.length)
        lines.push(
          `Children: ${children
            .slice(0, 20)
            .map(
              (c) =>
                `${c.workflow}/${c.key} ${c.status}${c.entry ? ` (entry "${c.entry}"${c.detached ? ", detached" : ""})` : ""}`,
            )
            .join("; ")}${children.length > 20 ? `; and ${children.length - 20} more` : ""}.`,
        );
      if (concurrency?.text) lines.push(`Pending: ${concurrency.text}.`);
      else if (concurrency?.holding)
        lines.push(
          `Holds one of the ${concurrency.limit} slot(s) of ${concurrency.key === "" ? `workflow "${workflow}"` : `${concurrency.label} ${concurrency.key}`}.`,
        );
      const waits = waitText(info.waiting);
      if (waits) lines.push(`Waits for ${waits}.`);
      if (rollback) lines.push(`Rollback: ${rollback.text}.`);
      const err = errorLine(info.error);
      if (err) lines.push(`Error: ${err}`);
      lines.push(`Input: ${brief(info.input)}`, `State: ${brief(info.state, 300)}`);
      if (info.status === "completed") lines.push(`Output: ${brief(info.output, 300)}`);
      if (pending.length) lines.push(`${pending.length} message(s) not yet consumed.`);
      if (writes.count)
        lines.push(
          `Writes (audit): ${writes.count}; latest ${writes.latest.map((w) => `${w.action} ${w.outcome} by ${w.by} at ${w.at}`).join("; ")}. All: ${writes.more}.`,
        );
      if (nextActions.length) lines.push(`Next: ${nextActions.join(" | ")}`);
      return { text: lines.join("\n"), structured };
    });
  },
});
