// list_workflows: what workflows exist, their versions, queues (with message schemas), actions and run counts.

import { z } from "zod";
import { fitAnswer } from "../budget.js";
import type { McpContext } from "../context.js";
import { nameList } from "../errors.js";
import { WORKFLOWS_URI } from "../uris.js";
import { defineTool, READ_ONLY } from "./tool.js";

/** Every workflow known here, merged from the registry, the runs and what owning processes published. */
export async function collectWorkflows(ctx: McpContext) {
  const listed = await ctx.engine.listWorkflows();
  await ctx.engine.published(true);
  const names = await ctx.workflowNames();
  const workflows = [];
  for (const name of names) {
    const w = listed.find((l) => l.name === name);
    const meta = await ctx.publishedLatest(name);
    const versions = [...new Set([...(w?.versions ?? []), ...(meta ? [meta.version] : [])])].sort(
      (a, b) => a - b,
    );
    workflows.push({
      name,
      versions,
      latest: Math.max(...versions, 1),
      description: w?.description ?? meta?.description ?? null,
      queues: meta?.queues ?? Object.fromEntries((w?.queues ?? []).map((q) => [q, {}])),
      actions: w?.actions.length ? w.actions : (meta?.actions ?? []),
      runs: w?.runs ?? {},
      canStart: ctx.hasCode(name) && ctx.offers("start_run"),
    });
  }
  return workflows;
}

export const listWorkflows = defineTool({
  name: "list_workflows",
  title: "List workflows",
  description:
    "Lists the workflows in this Waymark database: their versions, the queues they read messages from (with each queue's JSON Schema, which send_message bodies must match), their actions, and how many runs they have in each status. Start here to learn what exists; then use list_runs to find runs.",
  input: {},
  output: {
    workflows: z
      .array(
        z.object({
          name: z.string().describe("Workflow name; runs are addressed by this name and a key."),
          versions: z.array(z.number()).describe("Versions that have runs or are registered."),
          latest: z.number().describe("The version new runs take."),
          description: z.string().nullable().describe("What the workflow does, as its author wrote."),
          queues: z
            .record(z.string(), z.unknown())
            .describe("Queue name to the JSON Schema of its messages."),
          actions: z.array(z.string()).describe("Names of actions call_action can invoke."),
          runs: z.record(z.string(), z.number()).describe("Run counts by status."),
          canStart: z
            .boolean()
            .describe(
              "True when this server has the workflow's code and is not read-only, so start_run works.",
            ),
        }),
      )
      .describe("Workflows, by name."),
  },
  annotations: { ...READ_ONLY, title: "List workflows" },
  write: false,
  async handler(_args, ctx) {
    const workflows = await collectWorkflows(ctx);
    return fitAnswer((s) => {
      const shown = workflows.map((w) => ({
        ...w,
        queues: Object.fromEntries(
          Object.entries(w.queues).map(([q, schema]) => [
            q,
            s.value(schema, WORKFLOWS_URI, "All workflows with their queue schemas"),
          ]),
        ),
      }));
      const lines = shown.map((w) => {
        const runs = Object.entries(w.runs)
          .map(([st, n]) => `${n} ${st}`)
          .join(", ");
        const queues = Object.keys(w.queues);
        return `- ${w.name} v${w.latest}${w.description ? ` — ${w.description}` : ""}\n  runs: ${runs || "none"}; queues: ${queues.length ? nameList(queues) : "none"}; actions: ${w.actions.length ? nameList(w.actions) : "none"}${w.canStart ? "" : `; start_run: not here (${ctx.options.readOnly ? "read-only" : "this server has no code for it: waymark mcp --registry <module>"})`}`;
      });
      return {
        text: workflows.length
          ? `${workflows.length} workflow${workflows.length === 1 ? "" : "s"}:\n${lines.join("\n")}\nFind runs with list_runs; queue schemas are in structuredContent.`
          : `${ctx.database} has no workflows yet. If your application writes another file, point --db at it; otherwise start the application that registers them, or run \`waymark mcp --registry <module>\`.`,
        structured: { workflows: shown },
      };
    });
  },
});
