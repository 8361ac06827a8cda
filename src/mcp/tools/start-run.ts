// start_run: create a run by workflow and key (idempotent: an existing key returns the existing run).

import { z } from "zod";
import { fitAnswer } from "../budget.js";
import { nameList, ToolError } from "../errors.js";
import { quote, runSummary, runSummaryShape } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { tagsArg, tagsInput } from "../tags.js";
import { runUri } from "../uris.js";
import { defineTool } from "./tool.js";

export const startRun = defineTool({
  name: "start_run",
  title: "Start a run",
  description:
    "Starts a run of a workflow under a key, with an input. Idempotent by key: if a run with that key exists, nothing new starts and the existing run is returned (created: false, its own tags kept). Only works when this server runs the workflow's code (waymark mcp --registry); beside an application, start runs from the application. Follow the new run with wait_for_run or get_run.",
  input: {
    workflow: bounded(LIMITS.name, "workflow").describe("Workflow name (see list_workflows)."),
    key: bounded(LIMITS.key, "key")
      .min(1)
      .describe("Key of the new run: unique within the workflow, e.g. an order id."),
    input: z
      .unknown()
      .optional()
      .describe("The run's input (JSON), as the workflow's run function expects it."),
    tags: tagsInput(
      "Tags stored with the run when this creates it, to find it by (list_runs, list_failures).",
    ),
  },
  output: {
    created: z
      .boolean()
      .describe("False when a run with this key already existed (it was returned unchanged)."),
    run: z.object(runSummaryShape).describe("The run."),
  },
  annotations: {
    title: "Start a run",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: true,
    openWorldHint: true,
  },
  write: true,
  needsCode: true,
  async handler(args, ctx) {
    const engine = ctx.engine;
    if (!ctx.hasCode(args.workflow)) {
      const names = await ctx.workflowNames();
      if (!names.includes(args.workflow)) {
        throw new ToolError(
          "WORKFLOW_NOT_FOUND",
          `There is no workflow ${quote(args.workflow)}. ${names.length ? `Workflows here: ${nameList(names)}.` : `${ctx.database} has no workflows yet.`}`,
        );
      }
      throw new ToolError(
        "NO_CODE",
        `This MCP server has no code for workflow ${quote(args.workflow)} (it is attached to the database beside an application), so it cannot start runs. Start the run from the application that registers ${quote(args.workflow)}, or restart this server with --registry <module that exports the registry> so it runs the workflows itself.`,
      );
    }
    const existed = (await engine.findRun(args.workflow, args.key)) !== undefined;
    const handle = await engine.getOrCreate(args.workflow, args.key, args.input, tagsArg(args.tags));
    const info = await handle.info();
    const run = runSummary(info, runUri(info.workflow, info.key));
    return fitAnswer(() => ({
      text: existed
        ? `Run ${info.workflow}/${info.key} already existed (${info.status}); nothing new was started.`
        : `Started run ${info.workflow}/${info.key} (v${info.version}); it is ${info.status}. Follow it with wait_for_run or get_run.`,
      structured: { created: !existed, run },
    }));
  },
});
