// What replay_runs and cancel_runs share: the selector schema (which runs), the plan argument, the answer's
// schema, and the handler: a dry run pins a plan; a real call confirms, acts in batches and reports progress.

import { z } from "zod";
import type {
  BulkPreview,
  BulkRequest,
  BulkResult,
  BulkSelector,
  PlanAction,
} from "../../engine/bulk-types.js";
import type { RunStatus } from "../../storage/store.js";
import { fitAnswer, fitItems } from "../budget.js";
import type { McpContext } from "../context.js";
import { ToolError } from "../errors.js";
import { iso, quote, runStatusSchema } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { tagsInput } from "../tags.js";
import type { Extra } from "./tool.js";

/** The selector fields, every one optional; given ones must all hold. */
export const selectorShape = {
  signature: bounded(64, "signature")
    .optional()
    .describe(
      "A failure signature exactly as list_failures reports it: the failed and retrying runs that fail this way.",
    ),
  workflow: bounded(LIMITS.name, "workflow").optional().describe("Only runs of this workflow (exact name)."),
  status: z
    .array(runStatusSchema)
    .min(1)
    .max(8)
    .optional()
    .describe('Only runs in one of these statuses, e.g. ["failed"].'),
  keys: z
    .array(bounded(LIMITS.key, "key"))
    .min(1)
    .max(1000)
    .optional()
    .describe("Explicit run keys (1 to 1,000) of `workflow`."),
  createdAfter: bounded(LIMITS.time, "createdAfter")
    .optional()
    .describe("Only runs created at or after this ISO time."),
  createdBefore: bounded(LIMITS.time, "createdBefore")
    .optional()
    .describe("Only runs created before this ISO time."),
  tags: tagsInput(
    "Only runs holding every one of these tags with exactly these values (ANDed), as list_runs and list_failures filter them.",
  ),
};

/** The arguments of a real call and its batching. */
export const planShape = {
  plan: bounded(64, "plan")
    .optional()
    .describe(
      "The plan token a dry run answered. With it the call is real: it acts on exactly the runs that dry run pinned (pass no selector then). Without it the call is a dry run.",
    ),
  batchSize: z
    .number()
    .int()
    .min(1)
    .max(100)
    .optional()
    .describe("Runs acted on per batch (default 25); progress is stored and notified after each."),
};

const countsShape = z.object({
  done: z.number().describe("Replayed (replay_runs) or cancelled (cancel_runs) by this call."),
  requested: z.number().describe("Stored for the process that runs the workflow, not carried out yet."),
  refused: z.number().describe("Refused, each with its reason in refusals."),
  skipped: z.number().describe("Nothing to do: done by an earlier call of this plan, or changed since it."),
});

const refusalShape = z.object({
  run: z.string().describe("workflow/key."),
  status: z.string().describe("Its status."),
  reason: z.string().describe("Why it is refused or skipped."),
});

/** The answer of both tools: a dry run's preview, or a real call's counts. */
export const bulkOutput = {
  dryRun: z.boolean().describe("True: nothing changed; the plan token acts on these runs."),
  declined: z.boolean().describe("True when the user declined the confirmation: nothing changed."),
  plan: z.string().describe("The plan token: pass it as plan to act (within 15 minutes of the dry run)."),
  expiresAt: z.string().describe("When the plan stops being accepted unless it has started (ISO)."),
  matched: z.number().describe("Runs the plan pins (the selector's matches at the dry run)."),
  eligible: z.number().optional().describe("Dry run: how many of them would be acted on."),
  bySignature: z
    .array(
      z.object({
        signature: z.string().nullable().describe("Failure signature (null: runs without one)."),
        workflow: z.string().describe("Workflow name."),
        pattern: z.string().describe("The signature's normalised error message."),
        count: z.number().describe("Runs of the plan with it."),
        eligible: z.number().describe("How many of them would be acted on."),
      }),
    )
    .optional()
    .describe("Dry run: the runs counted by failure signature, most first."),
  samples: z
    .array(
      z.object({
        run: z.string().describe("workflow/key."),
        status: z.string().describe("Its status."),
        replay: z
          .object({
            from: z.string().nullable().describe("The entry the replay starts from."),
            discard: z.array(z.string()).describe("Entries discarded (the first ones)."),
            discardCount: z.number().describe("How many entries are discarded in all."),
            rerun: z.array(z.string()).describe("Steps that run again: their side effects repeat."),
            version: z.object({ from: z.number(), to: z.number() }).describe("Version before and after."),
            checkedAgainstCode: z
              .boolean()
              .describe("True when the kept history was checked against the code."),
          })
          .optional()
          .describe("What replaying it would discard and re-run."),
        refused: z.string().optional().describe("Why its dry run was refused."),
      }),
    )
    .optional()
    .describe("Dry run: up to ten runs dry-run one by one."),
  refusedCount: z.number().optional().describe("Dry run: how many would be refused or skipped."),
  counts: countsShape.optional().describe("Real call: what this call did."),
  progress: countsShape
    .extend({ pending: z.number().describe("Runs not acted on yet.") })
    .optional()
    .describe("Real call: the plan's progress over every call so far."),
  finished: z.boolean().optional().describe("Real call: true when no run of the plan is pending."),
  refusals: z.array(refusalShape).describe("Runs refused or skipped (the first ones), each with its reason."),
  message: z.string().describe("What happened, in a sentence."),
};

type SelectorArgs = { [K in keyof typeof selectorShape]?: z.output<(typeof selectorShape)[K]> };
type PlanArgs = { [K in keyof typeof planShape]?: z.output<(typeof planShape)[K]> };

function time(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms))
    throw new ToolError(
      "INVALID_INPUT",
      `${name} ${quote(value)} is not a time: use an ISO time such as 2026-01-31T12:00:00Z.`,
    );
  return ms;
}

/** The engine's selector from the tool's arguments (the same fields, times parsed). */
export function selectorOf(args: SelectorArgs): BulkSelector {
  const s: BulkSelector = {};
  if (args.signature !== undefined) s.signature = args.signature;
  if (args.workflow !== undefined) s.workflow = args.workflow;
  if (args.status !== undefined) s.status = args.status as RunStatus[];
  if (args.keys !== undefined) s.keys = args.keys;
  if (args.tags !== undefined && Object.keys(args.tags).length) s.tags = args.tags;
  const after = time(args.createdAfter, "createdAfter");
  const before = time(args.createdBefore, "createdBefore");
  if (after !== undefined) s.createdAfter = after;
  if (before !== undefined) s.createdBefore = before;
  return s;
}

const VERB: Record<PlanAction, { tool: string; done: string; doing: string }> = {
  replay: { tool: "replay_runs", done: "replayed", doing: "Replay" },
  cancel: { tool: "cancel_runs", done: "cancelled", doing: "Cancel" },
};

function previewAnswer(action: PlanAction, p: BulkPreview) {
  const v = VERB[action];
  const groups = p.bySignature
    .slice(0, 5)
    .map(
      (g) =>
        `${g.count}× ${g.signature ?? "(no signature)"} ${g.workflow}${g.pattern ? `: ${g.pattern}` : ""}`,
    );
  const message = `Dry run: ${v.tool} would act on ${p.eligible} of the ${p.matched} runs selected${p.refusedCount ? ` (${p.refusedCount} refused or skipped, see refusals)` : ""}; nothing changed. ${groups.length ? `By signature: ${groups.join("; ")}. ` : ""}Show this to the user; to do it call ${v.tool} ${JSON.stringify({ plan: p.token })} before ${iso(p.expiresAt)}: it acts on exactly these runs.`;
  return fitAnswer((s) => ({
    text: message,
    structured: {
      dryRun: true,
      declined: false,
      plan: p.token,
      expiresAt: iso(p.expiresAt)!,
      matched: p.matched,
      eligible: p.eligible,
      bySignature: fitItems(p.bySignature, Math.max(1000, s.limit)),
      samples: fitItems(p.samples, Math.max(2000, s.limit)),
      refusedCount: p.refusedCount,
      refusals: fitItems(p.refused, Math.max(1000, s.limit)),
      message,
    },
  }));
}

function resultAnswer(action: PlanAction, r: BulkResult, expiresAt: number) {
  const v = VERB[action];
  const c = r.counts;
  const message = `${v.doing} of plan ${r.token}: ${c.done} ${v.done}${c.requested ? `, ${c.requested} requested from the process that runs them` : ""}, ${c.refused} refused, ${c.skipped} skipped (already done or changed). ${r.finished ? `The plan is finished (${r.progress.done} ${v.done} in all); calling again does nothing more.` : `${r.progress.pending} runs are still pending: call ${v.tool} ${JSON.stringify({ plan: r.token })} again to carry on.`}${action === "replay" && c.done ? " The replayed runs run again now: follow them with list_runs or wait_for_run." : ""}`;
  return fitAnswer((s) => ({
    text: message,
    structured: {
      dryRun: false,
      declined: false,
      plan: r.token,
      expiresAt: iso(expiresAt)!,
      matched: r.total,
      counts: r.counts,
      progress: r.progress,
      finished: r.finished,
      refusals: fitItems(r.refusals, Math.max(1000, s.limit)),
      message,
    },
  }));
}

/** The handler of replay_runs (action "replay") and cancel_runs ("cancel"). */
export async function bulkHandler(
  action: PlanAction,
  args: SelectorArgs & PlanArgs & { version?: number | undefined },
  ctx: McpContext,
  extra: Extra,
) {
  const v = VERB[action];
  const selector = selectorOf(args);
  if (args.plan === undefined) {
    const request: BulkRequest = {
      action,
      selector,
      ...(args.version !== undefined ? { version: args.version } : {}),
    };
    return previewAnswer(action, await ctx.engine.bulk.preview(request));
  }
  if (Object.keys(selector).length > 0 || args.version !== undefined)
    throw new ToolError(
      "INVALID_INPUT",
      `Pass either a selector (a dry run that makes a plan) or plan (a real call on the runs it pinned), not both: the plan's runs were chosen by its dry run. Call ${v.tool} ${JSON.stringify({ plan: args.plan })}.`,
    );
  const info = await ctx.engine.bulk.plan(args.plan);
  if (info.action !== action)
    throw new ToolError(
      "INVALID_INPUT",
      `Plan ${args.plan} is a ${info.action} plan; carry it out with ${VERB[info.action].tool}.`,
    );
  const client = ctx.server.server.getClientVersion();
  if (info.progress.pending > 0 && ctx.server.server.getClientCapabilities()?.elicitation) {
    const answer = await ctx.server.server.elicitInput(
      {
        mode: "form",
        message: `${v.doing} ${info.progress.pending} run${info.progress.pending === 1 ? "" : "s"} of plan ${info.token} (selected by ${JSON.stringify(info.request.selector)}${action === "replay" ? "; each retries its failed step on the latest version, and steps after it run again" : "; running steps are aborted"})? This cannot be undone.`,
        requestedSchema: {
          type: "object",
          properties: {
            confirm: {
              type: "boolean",
              title: `${v.doing} now`,
              description: `${v.doing} the plan's runs as described.`,
            },
          },
          required: ["confirm"],
        },
      },
      { signal: extra.signal },
    );
    if (answer.action !== "accept" || answer.content?.confirm !== true) {
      const message = `The user declined; nothing changed. Plan ${info.token} still holds ${info.progress.pending} pending run${info.progress.pending === 1 ? "" : "s"}.`;
      return fitAnswer(() => ({
        text: message,
        structured: {
          dryRun: true,
          declined: true,
          plan: info.token,
          expiresAt: iso(info.expiresAt)!,
          matched: info.total,
          progress: info.progress,
          finished: false,
          refusals: [],
          message,
        },
      }));
    }
  }
  const token = extra._meta?.progressToken;
  const result = await ctx.engine.bulk.apply(info.token, {
    action,
    ...(args.batchSize !== undefined ? { batchSize: args.batchSize } : {}),
    by: `mcp:${client?.name ?? "client"} (${v.tool})`,
    audit: {
      surface: "mcp",
      client: {
        ...(client?.name ? { name: client.name } : {}),
        ...(client?.version ? { version: client.version } : {}),
        ...(extra.sessionId ? { session: extra.sessionId } : {}),
      },
      action: v.tool,
    },
    signal: extra.signal,
    onProgress: async (p) => {
      if (token === undefined) return;
      await extra
        .sendNotification({
          method: "notifications/progress",
          params: { progressToken: token, progress: p.processed, total: p.total, message: p.message },
        })
        .catch(() => {});
    },
  });
  return resultAnswer(action, result, info.expiresAt);
}
