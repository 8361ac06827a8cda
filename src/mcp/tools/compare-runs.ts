// compare_runs: a run against another (by default the latest completed run of the same workflow and
// version): where the histories first differ, input and state differences as JSON Pointers, the outputs of
// shared steps that differ, timing outliers, code versions.

import { z } from "zod";
import { call, type NextAction } from "../../diagnosis/index.js";
import type { RunRow } from "../../storage/store.js";
import { fitAnswer } from "../budget.js";
import type { McpContext } from "../context.js";
import { ToolError } from "../errors.js";
import { bounded, LIMITS } from "../limits.js";
import { comparisonAnswer, noComparisonAnswer } from "./compare-view.js";
import { actionShape } from "./diagnose-run.js";
import { defineTool, READ_ONLY } from "./tool.js";

const runId = z.number().int().positive().max(Number.MAX_SAFE_INTEGER);

const change = z.object({
  pointer: z.string().describe('RFC 6901 JSON Pointer into the value ("" is the whole value).'),
  run: z.unknown().optional().describe("The value there in the run (absent: the run has none there)."),
  other: z.unknown().optional().describe("The value there in the other run (absent: it has none there)."),
});

const diff = {
  changes: z.array(change).describe("The differences shown, in document order."),
  total: z.number().describe("How many differences there are."),
  more: z.boolean().describe("True when counting stopped at 10,000: there are more than total."),
};

const side = z.object({
  workflow: z.string().describe("Workflow name."),
  key: z.string().describe("Run key."),
  status: z.string().describe("Run status."),
  version: z.number().describe("The workflow version the run is on."),
  entries: z.number().describe("History entries of the workflow (replay markers left out)."),
  finishedAt: z.string().nullable().describe("ISO time it finished, or null."),
});

const entrySide = z
  .object({
    id: z.number().describe("Entry id (get_step takes it)."),
    kind: z.string().describe("Entry kind."),
    status: z.string().describe("Entry status."),
    error: z.string().optional().describe("Its error, one line."),
    durationMs: z.number().nullable().describe("Milliseconds from start to end."),
  })
  .nullable();

export const compareRuns = defineTool({
  name: "compare_runs",
  title: "Compare two runs",
  description:
    "Compares a run with another run to show why one failed and the other did not. By default the other run is the most recent completed run of the same workflow and code version; pass otherKey (and otherWorkflow) to pick it. Answers with what differs first: the first history entry where they part (path, kind, status and error on both sides), the input differences as JSON Pointers with both values, the state difference at that entry, the outputs of the steps both completed that differ, steps whose duration differs by a large factor, and both code versions. Use it after diagnose_run when a similar run succeeded, or when asked what is different about a run.",
  input: {
    workflow: bounded(LIMITS.name, "workflow")
      .optional()
      .describe("Workflow of the run to compare (with key), or leave out and pass runId."),
    key: bounded(LIMITS.key, "key").optional().describe("Key of the run to compare. Case-sensitive."),
    runId: runId.optional().describe("The run's numeric id, instead of workflow and key."),
    otherKey: bounded(LIMITS.key, "otherKey")
      .optional()
      .describe(
        "Key of the run to compare with (of the same workflow unless otherWorkflow is given). Leave out to compare with the latest completed run of the same workflow and version.",
      ),
    otherWorkflow: bounded(LIMITS.name, "otherWorkflow")
      .optional()
      .describe("Workflow of the run to compare with, when it is another workflow's run (with otherKey)."),
    otherRunId: runId.optional().describe("The other run's numeric id, instead of otherKey."),
  },
  output: {
    summary: z
      .string()
      .describe("What differs, first: code version, history, input, outputs, state, timing."),
    run: side.describe("The run compared."),
    other: side.nullable().describe("The run it was compared with; null when there is none (see reason)."),
    otherChosen: z
      .enum(["given", "latest-completed"])
      .optional()
      .describe('"given", or "latest-completed": the latest completed run of the same workflow and version.'),
    versions: z
      .object({ run: z.number(), other: z.number(), differ: z.boolean() })
      .optional()
      .describe("Code versions of both runs and whether they differ."),
    firstDifference: z
      .object({
        path: z.string().describe('Entry path, e.g. "charge" or "notify[mail]/send".'),
        reason: z
          .enum(["status", "kind", "only-in-run", "only-in-other"])
          .describe("Why they part there: another status, another kind, or only one run has the entry."),
        run: entrySide.describe("The entry in the run, or null when only the other has it."),
        other: entrySide.describe("The entry in the other run, or null when only the run has it."),
        state: z
          .object(diff)
          .describe(
            "The state where each run reached the entry (before it; without it, the run's last state).",
          ),
      })
      .nullable()
      .optional()
      .describe("The first entry where the histories differ; null when they match."),
    input: z.object(diff).optional().describe("Input differences (pointers into the inputs)."),
    outputs: z
      .object({
        differing: z
          .array(
            z.object({
              path: z.string().describe("Entry path."),
              kind: z.string().describe("Entry kind."),
              run: z.number().describe("Entry id in the run."),
              other: z.number().describe("Entry id in the other run."),
              ...diff,
            }),
          )
          .describe("Completed entries both runs have whose outputs differ, in the run's order."),
        total: z.number().describe("How many such entries there are."),
        shared: z.number().describe("Completed entries both runs have."),
      })
      .optional()
      .describe("Outputs of the shared steps that differ."),
    timing: z
      .object({
        outliers: z
          .array(
            z.object({
              path: z.string().describe("Step path."),
              run: z.number().describe("Entry id in the run."),
              other: z.number().describe("Entry id in the other run."),
              runMs: z.number().describe("Its duration in the run."),
              otherMs: z.number().describe("Its duration in the other run."),
              factor: z.number().describe("Slower over faster."),
            }),
          )
          .describe(
            "Steps both completed whose durations differ at least 5-fold and by 100 ms, widest first.",
          ),
        total: z.number().describe("How many outliers there are."),
      })
      .optional()
      .describe("Timing outliers."),
    reason: z.string().optional().describe("Why there is no run to compare with."),
    otherVersions: z
      .array(
        z.object({
          key: z.string().describe("Run key."),
          version: z.number().describe("Its version."),
          finishedAt: z.string().nullable().describe("ISO time."),
        }),
      )
      .optional()
      .describe(
        "With no run to compare with: the latest completed run on other versions, to pass as otherKey.",
      ),
    cut: z.array(z.string()).describe("What was left out to fit the answer (empty when nothing was)."),
    nextActions: z.array(actionShape).describe("Exact tool calls to look closer."),
  },
  annotations: { ...READ_ONLY, title: "Compare two runs" },
  write: false,
  async handler(args, ctx) {
    const row = await runArg(ctx, args.runId, args.workflow, args.key, "");
    const otherGiven = args.otherRunId !== undefined || args.otherKey !== undefined;
    if (args.otherWorkflow !== undefined && args.otherKey === undefined)
      throw new ToolError(
        "INVALID_INPUT",
        `otherWorkflow needs otherKey: the key of the ${args.otherWorkflow} run to compare with (list_runs finds them).`,
      );
    const otherRow = otherGiven
      ? await runArg(ctx, args.otherRunId, args.otherWorkflow ?? row.workflow, args.otherKey, "other")
      : undefined;
    if (otherRow?.id === row.id)
      throw new ToolError(
        "INVALID_INPUT",
        `The run and the other run are both "${row.workflow}/${row.key}". Pass another run as otherKey, or leave otherKey out to compare with the latest completed run of ${row.workflow} v${row.version}.`,
      );
    const c = await ctx.engine.compareRuns(row.id, otherRow?.id);
    const address = { workflow: row.workflow, key: row.key };
    if (c.other === null) {
      const next: NextAction[] = [
        ...c.otherVersions
          .slice(0, 2)
          .map((o) =>
            call(
              "compare_runs",
              { ...address, otherKey: o.key },
              `compare with the latest completed run on v${o.version}`,
            ),
          ),
        call(
          "list_runs",
          { workflow: row.workflow, status: ["completed"] },
          "find a completed run to pass as otherKey",
        ),
      ];
      return fitAnswer(() => noComparisonAnswer(c, ctx.forServer(next)));
    }
    const f = c.firstDifference;
    const next: NextAction[] = [];
    if (f?.run)
      next.push(call("get_step", { ...address, step: f.run.id }, `the entry "${f.path}" here whole`));
    if (f?.other)
      next.push(
        call(
          "get_step",
          { workflow: c.other.workflow, key: c.other.key, step: f.other.id },
          `the entry "${f.path}" in the other run whole`,
        ),
      );
    if (row.status === "failed" || row.status === "retrying")
      next.push(call("diagnose_run", address, "why this run failed and what to do"));
    return fitAnswer((s) => comparisonAnswer(c, s, ctx.forServer(next)));
  },
});

/** The run named by id, or by workflow and key; `which` is "" for the run, "other" for the other one. */
async function runArg(
  ctx: McpContext,
  id: number | undefined,
  workflow: string | undefined,
  key: string | undefined,
  which: "" | "other",
): Promise<RunRow> {
  const name = (n: string) => (which ? `${which}${n[0]!.toUpperCase()}${n.slice(1)}` : n);
  if (id !== undefined) {
    if (key !== undefined)
      throw new ToolError("INVALID_INPUT", `Pass ${name("runId")} or ${name("key")}, not both.`);
    const row = await ctx.engine.getRun(id);
    if (!row)
      throw new ToolError(
        "RUN_NOT_FOUND",
        `There is no run with id ${id}. Address the run by ${name("workflow")} and ${name("key")} instead (list_runs finds them).`,
      );
    return row;
  }
  if (workflow === undefined || key === undefined)
    throw new ToolError(
      "INVALID_INPUT",
      `compare_runs needs the run to compare: workflow and key (or runId)${which ? "" : ". The other run is optional: otherKey, otherWorkflow or otherRunId"}.`,
    );
  return ctx.run(workflow, key);
}
