// Prompts: diagnose a failed run (built on diagnose_run); review runs waiting for an approval. Arguments complete from the database.

import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, type GetPromptResult, McpError } from "@modelcontextprotocol/sdk/types.js";
import { actionLine } from "../diagnosis/index.js";
import { SHOWN_QUEUES } from "../format.js";
import type { McpContext } from "./context.js";
import { domainCode, nameList } from "./errors.js";
import { brief, quote, waitText } from "./format.js";
import { bounded, LIMITS } from "./limits.js";
import { runUri } from "./uris.js";

async function keysOf(
  ctx: McpContext,
  workflow: string | undefined,
  status: "failed" | "waiting",
  prefix: string,
) {
  if (prefix.length > LIMITS.key || (workflow?.length ?? 0) > LIMITS.name) return [];
  const page = await ctx.engine.listRuns({
    ...(workflow ? { workflow } : {}),
    status,
    ...(prefix ? { keyContains: prefix } : {}),
    limit: 100,
  });
  return [...new Set(page.runs.map((r) => r.key).filter((k) => k.startsWith(prefix)))];
}

async function workflowsWith(ctx: McpContext, status: "failed" | "waiting", prefix: string) {
  const out: string[] = [];
  for (const w of await ctx.engine.listWorkflows()) {
    if ((w.runs[status] ?? 0) > 0 && w.name.startsWith(prefix)) out.push(w.name);
  }
  return out;
}

/** The run a prompt is about; an unknown workflow or key is invalid params (with what exists), not an internal error. */
async function promptRun(ctx: McpContext, workflow: string, key: string) {
  try {
    return await ctx.run(workflow, key);
  } catch (err) {
    if (domainCode(err)) throw new McpError(ErrorCode.InvalidParams, (err as Error).message);
    throw err;
  }
}

/** Rejects an unknown workflow name as invalid params, naming the workflows that exist. */
async function knownWorkflow(ctx: McpContext, workflow: string): Promise<void> {
  const names = await ctx.workflowNames();
  if (names.includes(workflow)) return;
  throw new McpError(
    ErrorCode.InvalidParams,
    `There is no workflow ${quote(workflow)}. ${names.length ? `Workflows here: ${nameList(names)}.` : `${ctx.database} has no workflows yet.`}`,
  );
}

function user(text: string): GetPromptResult["messages"][number] {
  return { role: "user", content: { type: "text", text } };
}

export function registerPrompts(mcp: McpServer, ctx: McpContext): void {
  mcp.registerPrompt(
    "diagnose_failed_run",
    {
      title: "Diagnose a failed run",
      description:
        "Diagnose a failed (or stuck) run with diagnose_run: the culprit entry, the evidence, what a person must fix, and the exact tool calls that follow, replays previewed first.",
      argsSchema: {
        workflow: completable(
          bounded(LIMITS.name, "workflow").describe("Workflow of the failed run."),
          (value) => workflowsWith(ctx, "failed", value),
        ),
        key: completable(bounded(LIMITS.key, "key").describe("Key of the failed run."), (value, context) =>
          keysOf(ctx, context?.arguments?.workflow, "failed", value),
        ),
      },
    },
    async ({ workflow, key }) => {
      const row = await promptRun(ctx, workflow, key);
      const found = await ctx.engine.diagnose(row.id);
      const d = { ...found, nextActions: ctx.forServer(found.nextActions) };
      const writable = ctx.offers("replay_run");
      const address = JSON.stringify({ workflow, key });
      const evidence = d.evidence.map((e) => `- ${e.kind}: ${e.fact}`).join("\n");
      const actions = d.nextActions.map((a, i) => `${i + 1}. ${actionLine(a)}`).join("\n");
      const similar =
        d.similar && d.similar.count > 1
          ? `\n${d.similar.count} runs of "${workflow}" failed the same way in the last 7 days (e.g. ${d.similar.keys.join(", ")}); list_failures {"workflow": ${JSON.stringify(workflow)}} shows them with other signatures.`
          : "";
      const failed =
        d.culprit && d.run.status === "failed"
          ? `\nThe latest failed entry is "${d.culprit.path}" (id ${d.culprit.id}).`
          : "";
      const steps = [
        `1. Explain the diagnosis to the user in plain words: the category (${d.category}), the culprit${d.culprit ? ` entry "${d.culprit.path}"` : ""}, and the evidence that shows it. For more detail call get_step on the culprit or get_history ${address}; diagnose_run ${address} gives this diagnosis again after anything changes.`,
        "2. Say what a person must change first (the person steps below), and wait until the user says it is done. Never claim a fix was deployed.",
        writable
          ? "3. Then make the tool calls below in order. Run replay_run with dryRun: true first, show what it would discard and re-run, and replay for real only when the user agrees."
          : "3. Then make the tool calls below in order. This server is read-only: it cannot replay, send messages or cancel, so where the actions need that, tell the user what to do on a writable Waymark server and never call a tool this server does not list.",
        "4. Finish with wait_for_run and report how the run ended; if it fails again, call diagnose_run once more.",
      ];
      if (d.category === "healthy") {
        steps.unshift(
          `Note: this run is ${d.run.status} and nothing is wrong with it; say so, and what it is doing now.`,
        );
      }
      return {
        description: `Diagnose ${workflow}/${key}`,
        messages: [
          user(
            `Diagnose this Waymark run and help the user fix it. Resource ${runUri(workflow, key)}.\n\nDiagnosis (diagnose_run ${address}): ${d.category}${d.culprit ? ` at "${d.culprit.path}" (entry #${d.culprit.id})` : ""}, run ${d.run.status}, version ${d.run.version}.${failed}\n${d.summary}\n\nEvidence:\n${evidence || "- none"}${similar}\n\nNext actions:\n${actions || "- none"}\n\nSteps:\n${steps.join("\n")}`,
          ),
        ],
      };
    },
  );

  mcp.registerPrompt(
    "review_pending_approvals",
    {
      title: "Review pending approvals",
      description:
        "Go through runs that wait for a message (an approval, a decision) and answer them with the user.",
      argsSchema: {
        // completable() marks the schema it is given, and the SDK looks for the mark on the argument's own
        // schema: so mark the optional one (completable(...).optional() would hide the completer).
        workflow: completable(
          bounded(LIMITS.name, "workflow")
            .optional()
            .describe("Only runs of this workflow (optional; all workflows when left out)."),
          (value) => workflowsWith(ctx, "waiting", value ?? ""),
        ),
      },
    },
    async ({ workflow }) => {
      if (workflow) await knownWorkflow(ctx, workflow);
      const writable = ctx.offers("send_message");
      const page = await ctx.engine.listRuns({
        ...(workflow ? { workflow } : {}),
        status: "waiting",
        limit: 20,
      });
      const lines: string[] = [];
      for (const r of page.runs) {
        const queues = (r.waiting ?? []).filter((w) => w.kind === "queue").map((w) => w.queue!);
        const meta = (await ctx.engine.published()).get(`${r.workflow}@${r.version}`);
        // A wait on many queues: the first few schemas (get_run has the others).
        const schemas = queues
          .slice(0, SHOWN_QUEUES)
          .map((q) => `${q}: ${brief(meta?.queues[q] ?? "unknown schema", 300)}`);
        if (queues.length > SHOWN_QUEUES)
          schemas.push(`and ${queues.length - SHOWN_QUEUES} more queues (their schemas: get_run)`);
        lines.push(
          `- ${r.workflow}/${r.key}: waits for ${waitText(r.waiting)}; input ${brief(r.input, 200)}; state ${brief(r.state, 300)}${schemas.length ? `; message schema ${schemas.join("; ")}` : ""}`,
        );
      }
      const head = page.runs.length
        ? `${page.runs.length}${page.nextCursor ? "+" : ""} run(s) wait for a message${workflow ? ` (workflow ${workflow})` : ""}:\n${lines.join("\n")}`
        : `No run waits for a message${workflow ? ` in workflow ${workflow}` : ""} right now.`;
      const read =
        "For each run: read it with get_run (and get_history if the request needs context), then summarise for the user what is being asked, with the amounts, names and dates that matter.";
      const steps = writable
        ? [
            read,
            "Ask the user for each decision. Never decide for them.",
            'Send each decision with send_message (workflow, key, queue, a body that matches the schema) and an idempotencyKey such as "review-<key>-<queue>", so a retry cannot decide twice.',
            "Report what each run did next (send_message says whether the run consumed the message; wait_for_run shows the next status).",
          ]
        : [
            read,
            "This server is read-only: it cannot deliver decisions. For each run, tell the user which queue waits and what message body the schema asks for; the user sends it from a writable Waymark server (waymark mcp without --read-only) or from the application. Never decide for them.",
            "If the user says a decision was sent, follow the run with wait_for_run and report what it did next.",
          ];
      return {
        description: "Review runs waiting for a decision",
        messages: [
          user(`Review the pending approvals in this Waymark database.\n\n${head}\n\n${steps.join("\n")}`),
        ],
      };
    },
  );
}
