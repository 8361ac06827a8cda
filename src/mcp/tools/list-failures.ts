// list_failures: what is failing most — failed and retrying runs grouped by error signature, with counts.

import { z } from "zod";
import { fitAnswer, fitItems } from "../budget.js";
import { ToolError } from "../errors.js";
import { quote } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { tagsArg, tagsInput, tagsText } from "../tags.js";
import { defineTool, READ_ONLY } from "./tool.js";

export const listFailures = defineTool({
  name: "list_failures",
  title: "List failures by signature",
  description:
    'Answers "what is failing most?": failed and still-retrying runs since a time (default: the last 7 days), grouped by error signature (workflow, failing entry, error name and message with numbers, ids and quoted values normalised), most frequent first, each with its count, first and last seen, a few run keys, a diagnose_run call for its latest run and the replay_runs call (a dry run) that replays all of them once fixed. The signature of every failing run is stored when it fails, so the counts are complete at any scale. Narrow it by tags to ask "what fails for customer c-9?". Use it to spot a systematic failure before diagnosing one run.',
  input: {
    since: bounded(LIMITS.time, "since")
      .optional()
      .describe("Only failures at or after this ISO time (default: 7 days ago)."),
    workflow: bounded(LIMITS.name, "workflow")
      .optional()
      .describe("Only runs of this workflow (exact name, see list_workflows)."),
    tags: tagsInput("Only failing runs holding every one of these tags."),
    limit: z.number().int().min(1).max(50).optional().describe("Signatures to return, 1-50 (default 10)."),
  },
  output: {
    since: z.string().describe("The start of the window (ISO time)."),
    scanned: z.number().describe("Failed and retrying runs in the window, in every group."),
    complete: z
      .boolean()
      .describe("True: every failing run in the window is counted (signatures are stored and indexed)."),
    failures: z
      .array(
        z.object({
          signature: z.string().describe("Error signature."),
          workflow: z.string().describe("Workflow name."),
          entry: z.string().describe('Name of the failing entry, or "(workflow code)".'),
          errorName: z.string().describe("Error class name."),
          pattern: z.string().describe("The normalised message."),
          example: z.string().describe("One message as recorded."),
          count: z.number().describe("Runs with this signature in the window."),
          retrying: z.number().describe("How many of them are still retrying (the rest failed)."),
          firstSeen: z.string().describe("When the first failed (ISO time)."),
          lastSeen: z.string().describe("When the latest failed (ISO time)."),
          keys: z.array(z.string()).describe("Up to five run keys, newest first."),
          diagnose: z
            .object({
              tool: z.literal("diagnose_run"),
              args: z.object({ workflow: z.string(), key: z.string() }),
            })
            .describe("The call that diagnoses the newest of these runs."),
          replay: z
            .object({
              tool: z.literal("replay_runs"),
              args: z.object({
                signature: z.string().describe("The failure signature."),
                workflow: z.string().describe("The workflow."),
                tags: z
                  .record(z.string(), z.string())
                  .optional()
                  .describe("The tags this list was narrowed by: the replay takes the same runs only."),
              }),
            })
            .describe(
              "The dry run of replaying every run with this signature (and the tags asked for) once it is fixed: it answers a plan to act on.",
            ),
        }),
      )
      .describe("Signatures, most frequent first."),
  },
  annotations: { ...READ_ONLY, title: "List failures by signature" },
  write: false,
  async handler(args, ctx) {
    let since: number | undefined;
    if (args.since !== undefined) {
      since = /^\d+$/.test(args.since) ? Number(args.since) : Date.parse(args.since);
      if (!Number.isFinite(since)) {
        throw new ToolError(
          "INVALID_INPUT",
          `since ${quote(args.since)} is not a time: use an ISO time such as 2026-01-31T12:00:00Z.`,
        );
      }
    }
    const list = await ctx.engine.listFailures({
      ...(since !== undefined ? { since } : {}),
      ...(args.workflow !== undefined ? { workflow: args.workflow } : {}),
      ...tagsArg(args.tags),
      limit: args.limit ?? 10,
    });
    const all = list.failures.map((f) => ({
      ...f,
      diagnose: { tool: "diagnose_run" as const, args: { workflow: f.workflow, key: f.keys[0]! } },
      replay: {
        tool: "replay_runs" as const,
        args: { signature: f.signature, workflow: f.workflow, ...tagsArg(args.tags) },
      },
    }));
    const failures = fitItems(all, 14_000);
    const lines = failures.map(
      (f) =>
        `- ${f.count}× ${f.workflow} at "${f.entry}": ${f.errorName}: ${f.pattern} (${f.firstSeen} to ${f.lastSeen}${f.retrying ? `, ${f.retrying} still retrying` : ""}; e.g. ${f.keys.slice(0, 3).join(", ")}) → diagnose_run ${JSON.stringify(f.diagnose.args)}; after the fix: replay_runs ${JSON.stringify(f.replay.args)}`,
    );
    const text = failures.length
      ? `${failures.length} failure signature${failures.length === 1 ? "" : "s"} since ${list.since} (${list.scanned} failed or retrying runs in all):\n${lines.join("\n")}`
      : `No failed or retrying runs since ${list.since}${args.workflow ? ` in workflow ${quote(args.workflow)}` : ""}${args.tags && Object.keys(args.tags).length ? ` tagged ${tagsText(args.tags)}` : ""} in ${ctx.database}.`;
    return fitAnswer(() => ({
      text,
      structured: { since: list.since, scanned: list.scanned, complete: list.complete, failures },
    }));
  },
});
