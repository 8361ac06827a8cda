// get_history: a run's entries in order with status, timing, attempts, input, output, error and state change.

import { z } from "zod";
import { plural } from "../../diagnosis/format.js";
import { decodeCursor, encodeCursor } from "../../engine/cursor.js";
import { ENTRY_KINDS, ENTRY_STATUSES, oneOf } from "../../engine/entries.js";
import type { HistoryEntry } from "../../engine/views.js";
import { InvalidCursorError } from "../../errors.js";
import { fitAnswer, fitItems, type Shrinker } from "../budget.js";
import { ToolError } from "../errors.js";
import { brief, detailIso, errorLine, iso } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { historyUri, stepUri } from "../uris.js";
import { runAddress } from "./get-run.js";
import { defineTool, READ_ONLY } from "./tool.js";

/**
 * The entry id a history cursor continues after. Refused with INVALID_CURSOR (this tool's code for its
 * cursors from the start) when malformed or of another run's history.
 */
function afterOf(cursor: string, runId: number): number {
  let parts: number[];
  try {
    parts = decodeCursor(cursor, 2);
  } catch (err) {
    if (err instanceof InvalidCursorError) throw new ToolError("INVALID_CURSOR", err.message);
    throw err;
  }
  const [run, after] = parts as [number, number];
  if (run !== runId) {
    throw new ToolError(
      "INVALID_CURSOR",
      "This cursor belongs to another run's history. Pass the nextCursor of a previous page of this run, or omit it to start at the beginning.",
    );
  }
  return after;
}

export const entryShape = {
  id: z.number().describe("Entry id (use with get_step)."),
  path: z.string().describe('Entry path: scope and name, e.g. "notify[mail]/send" (use with get_step).'),
  kind: z.string().describe(`${oneOf(ENTRY_KINDS)}.`),
  status: z.string().describe(`${oneOf(ENTRY_STATUSES)}.`),
  startedAt: z.string().nullable().describe("ISO time."),
  endedAt: z.string().nullable().describe("ISO time."),
  durationMs: z.number().nullable().describe("Milliseconds from start to end."),
  attempts: z.number().describe("Attempts made (steps); 0 for other kinds."),
  input: z.unknown().optional().describe("What the entry worked on, as recorded."),
  output: z.unknown().optional().describe("What it returned, as recorded."),
  error: z.string().optional().describe("Its error, one line (stack: get_step)."),
  stateChange: z.unknown().optional().describe("State keys it changed: { key: [before, after] }."),
  detail: z
    .unknown()
    .optional()
    .describe("Kind-specific facts (a sleep's until, a queue wait's message...)."),
};

/** An entry as listed: values shrunk, links to the step resource for the whole. */
export function listedEntry(e: HistoryEntry, workflow: string, key: string, s: Shrinker) {
  const uri = stepUri(workflow, key, e.id);
  const name = `Entry ${e.path} whole`;
  return {
    id: e.id,
    path: e.path,
    kind: e.kind,
    status: e.status,
    startedAt: iso(e.startedAt),
    endedAt: iso(e.endedAt),
    durationMs: e.durationMs,
    attempts: e.attempts?.length ?? 0,
    ...(e.input !== undefined ? { input: s.value(e.input, uri, name) } : {}),
    ...(e.output !== undefined ? { output: s.value(e.output, uri, name) } : {}),
    ...(e.error ? { error: errorLine(e.error, Math.max(120, s.limit / 4))! } : {}),
    ...(e.stateChange ? { stateChange: s.value(e.stateChange, uri, name) } : {}),
    ...(e.detail ? { detail: s.value(detailIso(e.detail), uri, name) } : {}),
  };
}

export const getHistory = defineTool({
  name: "get_history",
  title: "Get a run's history",
  description:
    "Lists a run's history entries in the order they were recorded: steps (with attempt counts), sleeps, queue waits, joins/races and their branches, loops. Each entry has status, timing, input, output, its error in one line, and the state keys it changed. Large values are cut with a link to the entry's resource. Use it to see what a run did and where it stopped; call get_step for one entry whole (every attempt, stack, state before and after). Pass nextCursor back as cursor for more.",
  input: {
    ...runAddress,
    limit: z.number().int().min(1).max(100).optional().describe("Entries per page, 1-100 (default 30)."),
    cursor: bounded(LIMITS.cursor, "cursor")
      .optional()
      .describe("nextCursor of the previous page, unchanged; omit to start at the first entry."),
  },
  output: {
    entries: z.array(z.object(entryShape)).describe("Entries in recorded order."),
    nextCursor: z
      .string()
      .nullable()
      .describe("Pass as cursor for the next page; null when there is no more."),
    resource: z.string().describe("Resource holding the whole history."),
  },
  annotations: { ...READ_ONLY, title: "Get a run's history" },
  write: false,
  async handler(args, ctx) {
    const row = await ctx.run(args.workflow, args.key);
    const after = args.cursor ? afterOf(args.cursor, row.id) : 0;
    const limit = args.limit ?? 30;
    const page = await ctx.engine.history(row.id, { after, limit: limit + 1 });
    const more = page.length > limit;
    const entries = page.slice(0, limit);
    const uri = historyUri(row.workflow, row.key);
    return fitAnswer((s) => {
      const listed = fitItems(
        entries.map((e) => listedEntry(e, row.workflow, row.key, s)),
        11_000,
      );
      const last = listed.at(-1);
      const nextCursor =
        last && (more || listed.length < entries.length) ? encodeCursor([row.id, last.id]) : null;
      const lines = listed.map(
        (e) =>
          `#${e.id} ${e.path} (${e.kind}) ${e.status}${e.durationMs !== null ? ` ${e.durationMs}ms` : ""}${e.attempts > 1 ? `, ${e.attempts} attempts` : ""}${e.error ? ` — ${e.error.slice(0, 160)}` : e.output !== undefined ? ` → ${brief(e.output, 80)}` : ""}`,
      );
      return {
        text: listed.length
          ? `History of ${row.workflow}/${row.key} (${row.status}): ${plural(listed.length, "entry")}, ids ${listed[0]!.id} to ${last!.id}${nextCursor ? "; more with nextCursor" : ""}:\n${lines.join("\n")}`
          : after
            ? "No more entries."
            : `Run ${row.workflow}/${row.key} has no history yet (status ${row.status}).`,
        structured: { entries: listed, nextCursor, resource: uri },
      };
    });
  },
});
