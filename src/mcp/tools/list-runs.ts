// list_runs: find runs by workflow, status, key, creation time or error text, newest first, a page at a time.

import { z } from "zod";
import { RUN_STATUSES, type RunStatus } from "../../storage/store.js";
import { fitAnswer, fitItems } from "../budget.js";
import { ToolError } from "../errors.js";
import { quote, runLine, runStatusSchema, runSummary, runSummaryShape } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { tagsArg, tagsInput } from "../tags.js";
import { runUri } from "../uris.js";
import { defineTool, READ_ONLY } from "./tool.js";

function time(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms)) {
    throw new ToolError(
      "INVALID_INPUT",
      `${field} ${quote(value)} is not a time: use an ISO time such as 2025-01-31T12:00:00Z.`,
    );
  }
  return ms;
}

export const listRuns = defineTool({
  name: "list_runs",
  title: "List runs",
  description:
    "Finds runs, newest first, filtered by workflow, status, key (exact or substring), tags (exact values, all must match: e.g. every run of customer c-9), creation time or error text. Each run comes back as a one-line summary (status, what it waits for, its error). Use it to find failed runs (status: failed), runs waiting for a message (status: waiting), or a run whose key you half know. Pass nextCursor back as cursor for the next page. For one run's details use get_run.",
  input: {
    workflow: bounded(LIMITS.name, "workflow")
      .optional()
      .describe("Only runs of this workflow (exact name, see list_workflows)."),
    status: z
      .union([runStatusSchema, z.array(runStatusSchema).max(RUN_STATUSES.length)], {
        error: `status takes one of ${RUN_STATUSES.join(", ")}, or a list of them`,
      })
      .optional()
      .describe(
        'Only runs in this status or one of these statuses, e.g. "failed" or ["waiting", "sleeping"].',
      ),
    key: bounded(LIMITS.key, "key").optional().describe("Only the run with exactly this key."),
    keyContains: bounded(LIMITS.filter, "keyContains")
      .optional()
      .describe("Only runs whose key contains this text (case-sensitive)."),
    errorContains: bounded(LIMITS.filter, "errorContains")
      .optional()
      .describe(
        "Only runs whose error message contains this text, in any case (letters beyond A-Z too); quotes, backslashes and % are taken as they are. A retrying run has no error until it fails.",
      ),
    createdAfter: bounded(LIMITS.time, "createdAfter")
      .optional()
      .describe("Only runs created after this ISO time."),
    createdBefore: bounded(LIMITS.time, "createdBefore")
      .optional()
      .describe("Only runs created before this ISO time."),
    tags: tagsInput(
      "Only runs holding every one of these tags (read from an index: fast at any number of runs).",
    ),
    limit: z.number().int().min(1).max(100).optional().describe("Runs per page, 1-100 (default 25)."),
    cursor: bounded(LIMITS.cursor, "cursor")
      .optional()
      .describe("nextCursor of the previous page, unchanged; omit for the first page."),
  },
  output: {
    runs: z.array(z.object(runSummaryShape)).describe("Runs, newest first."),
    nextCursor: z.string().nullable().describe("Pass as cursor to get the next page; null on the last page."),
  },
  annotations: { ...READ_ONLY, title: "List runs" },
  write: false,
  async handler(args, ctx) {
    const limit = args.limit ?? 25;
    const createdAfter = time(args.createdAfter, "createdAfter");
    const createdBefore = time(args.createdBefore, "createdBefore");
    const query = {
      ...(args.workflow !== undefined ? { workflow: args.workflow } : {}),
      ...(args.status?.length ? { status: [args.status].flat() as RunStatus[] } : {}),
      ...(args.key !== undefined ? { key: args.key } : {}),
      ...(args.keyContains ? { keyContains: args.keyContains } : {}),
      ...(args.errorContains ? { errorContains: args.errorContains } : {}),
      ...tagsArg(args.tags),
      ...(createdAfter !== undefined ? { createdAfter } : {}),
      ...(createdBefore !== undefined ? { createdBefore } : {}),
      ...(args.cursor ? { cursor: args.cursor } : {}),
    };
    const page = await ctx.engine.listRuns({ ...query, limit });
    const all = page.runs.map((r) => runSummary(r, runUri(r.workflow, r.key)));
    const runs = fitItems(all, 11_000);
    let nextCursor = page.nextCursor;
    if (runs.length < all.length) {
      // The page ends early to keep the answer small: ask again for that many to get the right cursor.
      nextCursor = (await ctx.engine.listRuns({ ...query, limit: runs.length })).nextCursor;
    }
    return fitAnswer(() => ({
      text: runs.length
        ? `${runs.length} run${runs.length === 1 ? "" : "s"}${nextCursor ? " (more: pass nextCursor)" : ""}:\n${runs.map((r) => `- ${runLine(r)}`).join("\n")}`
        : `${Object.keys(query).length ? `No runs match${args.workflow ? ` (workflow ${quote(args.workflow)})` : ""}` : "No runs"} in ${ctx.database}. Call list_workflows to see workflows and their run counts.`,
      structured: { runs, nextCursor },
    }));
  },
});
