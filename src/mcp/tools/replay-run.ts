// replay_run: rerun a run after a fix, from a step or the failed step; a dry run shows what would happen.
// A real replay asks the user to confirm first when the client supports elicitation.

import { z } from "zod";
import type { ReplayPlan, ReplayRequest } from "../../engine/replay.js";
import { fitAnswer, fitItems } from "../budget.js";
import { iso } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { stateUri, stepUri } from "../uris.js";
import { runAddress } from "./get-run.js";
import { defineTool } from "./tool.js";

const entryRef = z.object({ id: z.number(), path: z.string() });

function isPlan(r: ReplayPlan | ReplayRequest): r is ReplayPlan {
  return !("requested" in r);
}

/** One line on what a plan discards and restores. */
function planText(p: ReplayPlan): string {
  const from = p.from
    ? `from "${p.from.path}" (#${p.from.id})`
    : "over its whole history (nothing discarded)";
  const paths = p.discard.slice(0, 8).map((d) => d.path);
  const again = p.rerun
    .slice(0, 8)
    .map((r) => (r.status === "completed" ? `${r.path}, which completed before` : r.path));
  const rerun = p.rerun.length
    ? `, runs ${p.rerun.length} step${p.rerun.length === 1 ? "" : "s"} again whose side effects repeat (${again.join("; ")}${p.rerun.length > 8 ? "; ..." : ""})`
    : ", runs no step again";
  const kids = (p.children ?? [])
    .slice(0, 8)
    .map((c) =>
      c.action === "reuse"
        ? `reuses child run ${c.workflow}/${c.key} (completed: its output is taken again, its side effects do not repeat)`
        : c.action === "replay"
          ? `replays child run ${c.workflow}/${c.key} (${c.status}) from its failed step first`
          : `waits again for child run ${c.workflow}/${c.key} (${c.status})`,
    );
  const children = kids.length ? `, ${kids.join(", ")}` : "";
  return `${from}: discards ${p.discard.length} entr${p.discard.length === 1 ? "y" : "ies"}${paths.length ? ` (${paths.join(", ")}${p.discard.length > 8 ? ", ..." : ""})` : ""}${rerun}${children}, puts back ${p.restoreMessages.length} message(s), restores the state as it was before, and runs on version ${p.version.to}${p.version.to !== p.version.from ? ` (was ${p.version.from})` : ""}${undoneText(p)}`;
}

/** What a replay does to steps a rollback undid: redone (discarded, they run again) or kept undone. */
function undoneText(p: ReplayPlan): string {
  const parts: string[] = [];
  if (p.from?.path.startsWith("~rollback/"))
    parts.push(
      "; it goes on with the rollback: the failed handler and the remaining ones run, those that finished do not",
    );
  const redo = (p.undone ?? []).filter((u) => u.redo).map((u) => u.path);
  const kept = (p.undone ?? []).filter((u) => !u.redo).map((u) => u.path);
  if (redo.length)
    parts.push(`; it redoes ${redo.length} undone step(s) (${redo.join(", ")}): they run again`);
  if (kept.length)
    parts.push(
      `; it does NOT redo ${kept.length} step(s) a rollback undid (${kept.join(", ")}): their records stay completed, so the run goes on as if their work stood; replay fromStep "${kept.at(-1)}" to redo them`,
    );
  return parts.join("");
}

export const replayRun = defineTool({
  name: "replay_run",
  title: "Replay a run",
  description:
    "Reruns a run after its problem was fixed: discards the chosen entry and everything recorded after it, restores the state as it was before it, puts back the messages those entries consumed, and resumes on the latest workflow version. Without fromStep it retries the failed step. ALWAYS call it first with dryRun: true and show the user what would be discarded and re-run; a real replay asks the user to confirm when the client supports it. Refused (isError) while the run executes or when the kept history no longer matches the code; the text says what to do.",
  input: {
    ...runAddress,
    fromStep: z
      .union([bounded(LIMITS.step, "fromStep"), z.number().int()])
      .optional()
      .describe(
        'Entry path (e.g. "charge", "notify[mail]/send") or id to replay from. Default: the failed entry.',
      ),
    version: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe("Workflow version to run from now on. Default: the latest."),
    dryRun: z
      .boolean()
      .optional()
      .describe(
        "true: only show what would be discarded, restored and re-run; change nothing. Default false.",
      ),
  },
  output: {
    run: z.string().describe("workflow/key."),
    dryRun: z.boolean().describe("True when nothing was changed on purpose."),
    applied: z.boolean().describe("True when the replay was carried out."),
    requested: z
      .boolean()
      .describe(
        "True when it is stored for the process that runs the workflow, which has not applied it yet.",
      ),
    declined: z.boolean().describe("True when the user declined the confirmation: nothing changed."),
    from: entryRef.nullable().describe("The entry the replay starts from, or null (nothing discarded)."),
    discard: z
      .array(z.object({ id: z.number(), path: z.string(), kind: z.string(), status: z.string() }))
      .describe("Entries discarded (first ones, see discardCount)."),
    discardCount: z.number().describe("How many entries are discarded in all."),
    rerun: z
      .array(z.object({ id: z.number(), path: z.string(), status: z.string(), attempts: z.number() }))
      .describe(
        "Discarded steps whose functions run again when the code reaches them: their side effects (a charge, an email) repeat; a completed one already did its work once. Show these to the user.",
      ),
    children: z
      .array(
        z.object({
          entry: entryRef,
          workflow: z.string(),
          key: z.string(),
          status: z.string(),
          action: z.enum(["reuse", "replay", "wait"]),
        }),
      )
      .optional()
      .describe(
        "Child runs of discarded ctx.child entries: reuse (completed: its output is taken again, its side effects do not repeat), replay (failed or cancelled: replayed from its failed step with this run), wait (unfinished). Show these to the user.",
      ),
    undone: z
      .array(
        z.object({
          id: z.number().describe("The step's entry id."),
          path: z.string().describe("The step's path."),
          redo: z.boolean().describe("True: discarded, so it runs again. False: kept completed, not redone."),
        }),
      )
      .optional()
      .describe(
        "Steps a rollback undid, and whether this replay redoes them. Tell the user about any with redo false: the run would go on without their work.",
      ),
    reopen: z
      .array(z.object({ id: z.number(), path: z.string(), kind: z.string() }))
      .describe("Containers reopened."),
    restoreMessages: z
      .array(
        z.object({ id: z.number(), queue: z.string(), sentAt: z.string().nullable(), body: z.unknown() }),
      )
      .describe("Messages put back on their queues."),
    restoreState: z.unknown().describe("The state the run resumes with."),
    version: z
      .object({ from: z.number(), to: z.number() })
      .nullable()
      .describe("Workflow version before and after."),
    message: z.string().describe("What happened, in a sentence."),
  },
  annotations: {
    title: "Replay a run",
    readOnlyHint: false,
    destructiveHint: true,
    idempotentHint: false,
    openWorldHint: true,
  },
  write: true,
  async handler(args, ctx, extra) {
    const engine = ctx.engine;
    const row = await ctx.run(args.workflow, args.key);
    const label = `${row.workflow}/${row.key}`;
    const options = {
      ...(args.fromStep !== undefined ? { fromStep: args.fromStep } : {}),
      ...(args.version !== undefined ? { version: args.version } : {}),
      requestedBy: `mcp:${ctx.server.server.getClientVersion()?.name ?? "client"}`,
    };
    const dryRun = args.dryRun ?? false;
    let declined = false;
    let result: ReplayPlan | ReplayRequest;
    if (!dryRun && ctx.server.server.getClientCapabilities()?.elicitation) {
      const preview = await engine.replay(row.id, { ...options, dryRun: true });
      const answer = await ctx.server.server.elicitInput(
        {
          mode: "form",
          message: `Replay run ${label} ${isPlan(preview) ? planText(preview) : ""}? This cannot be undone.`,
          requestedSchema: {
            type: "object",
            properties: {
              confirm: { type: "boolean", title: "Replay now", description: `Replay ${label} as described.` },
            },
            required: ["confirm"],
          },
        },
        { signal: extra.signal },
      );
      declined = answer.action !== "accept" || answer.content?.confirm !== true;
      result = declined ? preview : await engine.replay(row.id, { ...options, dryRun: false });
    } else {
      result = await engine.replay(row.id, { ...options, dryRun });
    }

    if (!isPlan(result)) {
      return fitAnswer(() => ({
        text: `Replay of ${label} requested: ${result.message} Follow it with wait_for_run.`,
        structured: {
          run: label,
          dryRun: false,
          applied: false,
          requested: true,
          declined: false,
          from: null,
          discard: [],
          discardCount: 0,
          rerun: [],
          reopen: [],
          restoreMessages: [],
          restoreState: null,
          version: null,
          message: result.message,
        },
      }));
    }
    const plan = result;
    // Where the whole restored state can be read: the run's state once applied, else the state before `from`.
    const uri =
      plan.applied && !declined
        ? stateUri(row.workflow, row.key)
        : plan.from
          ? stepUri(row.workflow, row.key, plan.from.id)
          : stateUri(row.workflow, row.key);
    const message = declined
      ? `The user declined the replay of ${label}; nothing changed. It would replay ${planText(plan)}.`
      : plan.applied
        ? `Replayed ${label} ${planText(plan)}. It runs again now: follow it with wait_for_run.`
        : `Dry run: replaying ${label} would go ${planText(plan)}. Nothing changed; call replay_run without dryRun to do it.`;
    return fitAnswer((s) => {
      const discard = fitItems(plan.discard, Math.max(1000, s.limit));
      return {
        text: message,
        structured: {
          run: label,
          dryRun: dryRun || declined,
          applied: plan.applied && !declined,
          requested: false,
          declined,
          from: plan.from,
          discard,
          discardCount: plan.discard.length,
          rerun: fitItems(plan.rerun, Math.max(1000, s.limit)),
          children: (plan.children ?? []).slice(0, 100),
          ...(plan.undone ? { undone: plan.undone.slice(0, 100) } : {}),
          reopen: plan.reopen,
          restoreMessages: plan.restoreMessages.slice(0, 20).map((m) => ({
            id: m.id,
            queue: m.queue,
            sentAt: iso(m.sentAt),
            body: s.value(m.body, uri, "State before the replayed entry", Math.min(s.limit, 1000)),
          })),
          restoreState: s.value(plan.restoreState, uri, "The state the run resumes with (stateBefore)"),
          version: plan.version,
          message,
        },
      };
    });
  },
});
