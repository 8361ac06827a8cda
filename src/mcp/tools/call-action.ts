// call_action: invoke one of a workflow's actions on a run (reads of its state, or sends it messages).

import { z } from "zod";
import { fitAnswer } from "../budget.js";
import { brief } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { runUri } from "../uris.js";
import { runAddress } from "./get-run.js";
import { defineTool } from "./tool.js";

export const callAction = defineTool({
  name: "call_action",
  title: "Call a run's action",
  description:
    "Calls an action the workflow declares (list_workflows shows their names) on one run, with the run's committed state, and returns what it returns. Actions are the workflow author's own API: usually reads (e.g. getState), sometimes they send the run a message. Needs the workflow's code in this server (waymark mcp --registry).",
  input: {
    ...runAddress,
    action: bounded(LIMITS.name, "action").describe("Action name, as declared by the workflow."),
    args: z
      .array(z.unknown())
      .optional()
      .describe("Arguments passed to the action after its context (JSON)."),
  },
  output: {
    result: z.unknown().describe("What the action returned (JSON)."),
  },
  annotations: {
    title: "Call a run's action",
    readOnlyHint: false,
    destructiveHint: false,
    idempotentHint: false,
    openWorldHint: true,
  },
  write: true,
  needsCode: true,
  async handler(args, ctx) {
    const row = await ctx.run(args.workflow, args.key);
    const result = await ctx.engine.action(row.id, args.action, args.args ?? []);
    const uri = runUri(row.workflow, row.key);
    return fitAnswer((s) => {
      const value = s.value(
        result ?? null,
        uri,
        "The run (an action's result is not stored: narrow the call to see more)",
      );
      return {
        text: `${args.action}() on ${row.workflow}/${row.key} returned ${brief(result ?? null, 2000)}`,
        structured: { result: value },
      };
    });
  },
});
