// Prompts: diagnose a failed run; review runs waiting for an approval. Arguments complete from the database.

import { completable } from "@modelcontextprotocol/sdk/server/completable.js";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { GetPromptResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { McpContext } from "./context.js";
import { brief, errorLine, waitText } from "./format.js";
import { runUri } from "./uris.js";

async function keysOf(
  ctx: McpContext,
  workflow: string | undefined,
  status: "failed" | "waiting",
  prefix: string,
) {
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

function user(text: string): GetPromptResult["messages"][number] {
  return { role: "user", content: { type: "text", text } };
}

export function registerPrompts(mcp: McpServer, ctx: McpContext): void {
  mcp.registerPrompt(
    "diagnose_failed_run",
    {
      title: "Diagnose a failed run",
      description: "Find why a run failed, name the culprit entry and the fix, and plan a safe replay.",
      argsSchema: {
        workflow: completable(z.string().describe("Workflow of the failed run."), (value) =>
          workflowsWith(ctx, "failed", value),
        ),
        key: completable(z.string().describe("Key of the failed run."), (value, context) =>
          keysOf(ctx, context?.arguments?.workflow, "failed", value),
        ),
      },
    },
    async ({ workflow, key }) => {
      const row = await ctx.run(workflow, key);
      const info = await ctx.engine.info(row.id);
      const entries = await ctx.engine.history(row.id, { limit: 10_000 });
      const failed = entries.filter((e) => e.status === "failed").at(-1);
      const address = JSON.stringify({ workflow, key });
      const facts = [
        `Run ${workflow}/${key} (resource ${runUri(workflow, key)}) is ${info.status}, version ${info.version}, ${entries.length} history entries.`,
        info.error ? `Its error: ${errorLine(info.error, 600)}` : "It has no recorded error.",
        failed
          ? `The latest failed entry is "${failed.path}" (id ${failed.id}, ${failed.attempts?.length ?? 0} attempts).`
          : "No entry is marked failed.",
        `Input: ${brief(info.input, 400)}`,
      ];
      const steps = [
        `1. Call get_run ${address} and get_history ${address} to see what the run did and where it stopped.`,
        `2. Call get_step on the failed entry${failed ? ` (${JSON.stringify({ workflow, key, step: failed.path })})` : ""}: read every attempt's error and stack, and the state before it.`,
        "3. Name the culprit entry and the category: a bug in the step's code, bad input or state, an external service failing, a timeout, or code drift (HISTORY_DIVERGED: the code no longer matches the history).",
        `4. Look for similar failures with list_runs {"workflow": ${JSON.stringify(workflow)}, "status": ["failed"], "errorContains": "<a distinctive part of the error>"}.`,
        "5. Propose the fix (code or data) with the evidence. Do not change anything yet.",
        `6. Once the fix is deployed, preview a replay with replay_run ${JSON.stringify({ workflow, key, dryRun: true })}, show what it would discard and re-run, and replay for real only when the user agrees.`,
      ];
      if (info.status !== "failed") {
        steps.unshift(
          `Note: this run is ${info.status}, not failed; say so and check whether a step failed and is being retried.`,
        );
      }
      return {
        description: `Diagnose ${workflow}/${key}`,
        messages: [
          user(`Diagnose why this Waymark run failed.\n\n${facts.join("\n")}\n\nSteps:\n${steps.join("\n")}`),
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
        workflow: completable(z.string().describe("Only runs of this workflow (optional)."), (value) =>
          workflowsWith(ctx, "waiting", value),
        ).optional(),
      },
    },
    async ({ workflow }) => {
      const page = await ctx.engine.listRuns({
        ...(workflow ? { workflow } : {}),
        status: "waiting",
        limit: 20,
      });
      const lines: string[] = [];
      for (const r of page.runs) {
        const queues = (r.waiting ?? []).filter((w) => w.kind === "queue").map((w) => w.queue!);
        const meta = (await ctx.engine.published()).get(`${r.workflow}@${r.version}`);
        const schemas = queues.map((q) => `${q}: ${brief(meta?.queues[q] ?? "unknown schema", 300)}`);
        lines.push(
          `- ${r.workflow}/${r.key}: waits for ${waitText(r.waiting)}; input ${brief(r.input, 200)}; state ${brief(r.state, 300)}${schemas.length ? `; message schema ${schemas.join("; ")}` : ""}`,
        );
      }
      const head = page.runs.length
        ? `${page.runs.length}${page.nextCursor ? "+" : ""} run(s) wait for a message${workflow ? ` (workflow ${workflow})` : ""}:\n${lines.join("\n")}`
        : `No run waits for a message${workflow ? ` in workflow ${workflow}` : ""} right now.`;
      const steps = [
        "For each run: read it with get_run (and get_history if the request needs context), then summarise for the user what is being asked, with the amounts, names and dates that matter.",
        "Ask the user for each decision. Never decide for them.",
        'Send each decision with send_message (workflow, key, queue, a body that matches the schema) and an idempotencyKey such as "review-<key>-<queue>", so a retry cannot decide twice.',
        "Report what each run did next (send_message says whether the run consumed the message; wait_for_run shows the next status).",
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
