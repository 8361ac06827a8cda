// diagnose_run: why a run failed or is stuck — category, culprit entry, evidence, similar failures, and the
// exact next tool calls (plus what a person must change first).

import { z } from "zod";
import { CATEGORIES, diagnosisText } from "../../diagnosis/index.js";
import { RUN_VIEW_URI } from "../apps/uris.js";
import { fitAnswer } from "../budget.js";
import { runStatusSchema } from "../format.js";
import { runAddress } from "./get-run.js";
import { defineTool, READ_ONLY } from "./tool.js";

const evidenceShape = z.object({
  kind: z
    .string()
    .describe('What the fact is about: "error", "frame", "attempt", "input", "state", "near-miss"...'),
  fact: z.string().describe("The fact, one line."),
  entry: z.number().optional().describe("Id of the history entry it comes from (get_step takes it)."),
  attempt: z.number().optional().describe("Attempt number within that entry."),
  ref: z
    .string()
    .optional()
    .describe('Another record it comes from: "run", "rejection #3", "message #12"...'),
});

/** A next action as answers list it: an exact tool call, or a change for a person. */
export const actionShape = z.discriminatedUnion("kind", [
  z.object({
    kind: z.literal("call").describe("An exact tool call."),
    tool: z.string().describe("Tool name."),
    args: z.record(z.string(), z.unknown()).describe("Its arguments, valid as they are."),
    why: z.string().describe("What the call is for."),
  }),
  z.object({
    kind: z.literal("person").describe("A change only a person can make, before the calls after it."),
    change: z.string().describe("What to change (code, data, a service, the sender of a message)."),
  }),
]);

/** The output schema of diagnose_run: a Diagnosis (src/diagnosis/types.ts). */
export const diagnoseOutput = {
  run: z
    .object({ workflow: z.string(), key: z.string(), status: runStatusSchema, version: z.number() })
    .describe("The run diagnosed."),
  category: z
    .enum(CATEGORIES as [string, ...string[]])
    .describe(
      "step-failed, fatal-error, step-timeout, code-drift, workflow-error, stuck-waiting, rejected-messages, retry-storm, sleeping-far, cancelled, stalled, or healthy.",
    ),
  culprit: z
    .object({
      id: z.number().describe("Entry id."),
      name: z.string().describe("Entry name."),
      path: z.string().describe('Entry path, e.g. "notify[sms]/send-sms".'),
      scope: z.string().describe('Scope path: "" at the root, "notify[sms]" in a branch.'),
      kind: z.string().describe("Entry kind."),
      run: z
        .object({ workflow: z.string(), key: z.string() })
        .optional()
        .describe("The child run holding the entry, when it is not the run diagnosed (see chain)."),
    })
    .nullable()
    .describe(
      "The entry to blame (for a healthy run, where it is); null when the code failed outside any entry.",
    ),
  summary: z.string().describe("Two sentences a person can act on: what happened and what to do."),
  evidence: z.array(evidenceShape).describe("The facts the diagnosis rests on."),
  similar: z
    .object({
      signature: z.string().describe("Error signature (list_failures groups by it)."),
      pattern: z.string().describe("The error message with numbers, ids and quoted values normalised."),
      count: z.number().describe("Runs failing this way in the last 7 days, this one included."),
      firstSeen: z.string().optional().describe("When the first of them failed."),
      lastSeen: z.string().optional().describe("When the latest of them failed."),
      keys: z.array(z.string()).describe("Keys of a few of the other runs."),
    })
    .nullable()
    .describe("Runs of the workflow failing the same way; null when the run is not failing."),
  nextActions: z
    .array(actionShape)
    .describe("What to do, in order: exact tool calls, and changes only a person can make."),
  chain: z
    .array(
      z.object({
        workflow: z.string(),
        key: z.string(),
        status: z.string(),
        entry: z.string().optional().describe("The ctx.child entry that started the next run."),
      }),
    )
    .optional()
    .describe(
      "When the trouble is in a child run: the runs from this one down to the innermost in trouble; culprit and evidence are the last one's.",
    ),
};

export const diagnoseRun = defineTool({
  name: "diagnose_run",
  title: "Diagnose a run",
  description:
    "Explains why a run failed, is stuck or misbehaves, and what to do about it. Returns the category (a step out of retries, a fatal error, a timeout, code drift, workflow code that threw, a wait nobody answers, messages the schema refused, a retry storm, a sleep far in the future, a cancel, a dead owner process, or healthy), the culprit entry, the evidence (error, the user-code line that threw, every attempt with times and backoff, input and state; or the messages that went astray), other runs failing the same way, and the next actions as exact tool calls with their arguments, after what a person must change first. Call it first when asked why a run failed or what to do with it; follow with the calls it lists (show person steps to the user; preview replays with dryRun).",
  input: runAddress,
  output: diagnoseOutput,
  annotations: { ...READ_ONLY, title: "Diagnose a run" },
  write: false,
  view: { resourceUri: RUN_VIEW_URI },
  async handler(args, ctx) {
    const row = await ctx.run(args.workflow, args.key);
    const found = await ctx.engine.diagnose(row.id);
    const d = { ...found, nextActions: ctx.forServer(found.nextActions) };
    return fitAnswer(() => ({ text: diagnosisText(d), structured: { ...d } }));
  },
});
