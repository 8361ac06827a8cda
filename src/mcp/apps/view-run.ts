// view_run: the data of the run view, in the inspector's own shapes (src/inspector/shapes.ts), for the MCP
// Apps view only (visibility "app": hosts do not show it to the model). Registered only for clients that
// render views (register.ts). Read-only; the answer keeps to the budget like every other tool's.

import { z } from "zod";
import type { HistoryAnswer } from "../../inspector/shapes.js";
import { fitAnswer, fitItems } from "../budget.js";
import { runAddress } from "../tools/get-run.js";
import { defineTool, READ_ONLY } from "../tools/tool.js";
import { runUri } from "../uris.js";
import { RUN_VIEW_URI } from "./uris.js";

export const viewRun = defineTool({
  name: "view_run",
  title: "Run view data",
  description:
    "For the run view of an MCP Apps host only (hidden from the model): one run in the shapes the view draws — the run with what it waits on and its queues' schemas, the timeline's entries, the chosen entry whole with the state before and after it, and the diagnosis of a failed run. Use get_run, get_history, get_step and diagnose_run instead.",
  input: {
    ...runAddress,
    entry: z
      .number()
      .int()
      .positive()
      .optional()
      .describe("Id of the history entry to show whole (with the state before and after it)."),
  },
  output: {
    run: z.unknown().describe("The run as the inspector's GET /api/runs/{workflow}/{key} answers it."),
    history: z
      .unknown()
      .describe("The timeline's entries (the first ones that fit; truncated says more exist)."),
    entry: z.unknown().describe("The chosen entry whole, or null."),
    diagnosis: z.unknown().describe("diagnose_run's answer for a failed run, else null."),
    readOnly: z.boolean().describe("True when this server offers no write tools: the view shows no buttons."),
  },
  annotations: { ...READ_ONLY, title: "Run view data" },
  write: false,
  view: { resourceUri: RUN_VIEW_URI, visibility: ["app"] },
  async handler(args, ctx) {
    const row = await ctx.run(args.workflow, args.key);
    const readOnly = ctx.options.readOnly ?? false;
    // The inspector's code is loaded by the first call (only a client that renders views has this tool).
    const [{ InspectorApi }, { clip }] = await Promise.all([
      import("../../inspector/api.js"),
      import("../../inspector/shapes.js"),
    ]);
    const api = new InspectorApi(ctx.engine, { readOnly, maxBodyBytes: 0 });
    const { workflow, key } = row;
    const history = await api.history(workflow, key);
    const found = row.status === "failed" ? await ctx.engine.diagnose(row.id) : null;
    const diagnosis = found ? { ...found, nextActions: ctx.forServer(found.nextActions) } : null;
    const uri = runUri(workflow, key);
    // Loaded whole once, then clipped to each limit fitAnswer tries (a third of it per value).
    const whole = await api.run(workflow, key, Number.POSITIVE_INFINITY);
    const chosen = args.entry
      ? (await api.entry(workflow, key, String(args.entry), Number.POSITIVE_INFINITY)).entry
      : null;
    return fitAnswer((s) => {
      const max = Math.max(40, Math.floor(s.limit / 3));
      const r = whole.run;
      const run = {
        ...whole,
        run: {
          ...r,
          input: clip(r.input, max),
          state: clip(r.state, max),
          output: clip(r.output, max),
          error: r.error ? s.error(r.error, uri, "The run, whole") : null,
        },
      };
      const entry = chosen && {
        ...chosen,
        input: clip(chosen.input, max),
        output: clip(chosen.output, max),
        stateBefore: clip(chosen.stateBefore, max),
        stateAfter: clip(chosen.stateAfter, max),
        stateChange: clip(chosen.stateChange, max),
        detail: clip(chosen.detail, max),
        error: chosen.error ? s.error(chosen.error, uri, "The run, whole") : null,
        attempts: chosen.attempts?.map((a) =>
          a.error ? { ...a, error: s.error(a.error, uri, "The run, whole") } : a,
        ),
      };
      const bars = fitItems(history.entries, s.limit * 2);
      const drawn: HistoryAnswer = {
        ...history,
        entries: bars,
        truncated: history.truncated || bars.length < history.entries.length,
      };
      return {
        text: `The run view's data of ${workflow}/${key} (${run.run.status}): ${bars.length} of ${history.entries.length} entries${entry ? `, entry #${entry.id}` : ""}.`,
        structured: { run, history: drawn, entry, diagnosis, readOnly },
      };
    });
  },
});
