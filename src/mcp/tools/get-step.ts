// get_step: one history entry whole: every attempt with its error and stack, input, output, state before/after.

import { z } from "zod";
import type { EntryDetail, WaymarkEngine } from "../../engine/api.js";
import type { ErrorInfo } from "../../engine/error-info.js";
import { fitAnswer } from "../budget.js";
import { domainCode } from "../errors.js";
import { brief, detailIso, errorLine, iso } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { stepUri } from "../uris.js";
import { runAddress } from "./get-run.js";
import { defineTool, READ_ONLY } from "./tool.js";

/** An entry by path, or by id (a number, or digits that name no path). */
export async function findEntry(
  engine: WaymarkEngine,
  runId: number,
  ref: string | number,
): Promise<EntryDetail> {
  if (typeof ref === "number") return engine.entry(runId, ref);
  try {
    return await engine.entry(runId, ref);
  } catch (err) {
    if (/^\d+$/.test(ref) && domainCode(err) === "ENTRY_NOT_FOUND") return engine.entry(runId, Number(ref));
    throw err;
  }
}

const errorShape = z
  .object({
    name: z.string(),
    message: z.string(),
    code: z.string().optional(),
    stack: z.string().optional(),
  })
  .passthrough();

export const getStep = defineTool({
  name: "get_step",
  title: "Get one history entry",
  description:
    'Shows one history entry of a run whole: kind, status, timing, input, output, every attempt (start, end, status, error with stack, when the retry was scheduled), kind-specific detail, and the run\'s state just before and just after it. Use it on the failed entry that get_run or get_history points to, to see why it failed. Address the entry by path (e.g. "charge" or "notify[mail]/send") or by id.',
  input: {
    ...runAddress,
    step: z
      .union([bounded(LIMITS.step, "step"), z.number().int()])
      .describe('Entry path (e.g. "charge", "notify[mail]/send") or entry id from get_history.'),
  },
  output: {
    id: z.number().describe("Entry id."),
    path: z.string().describe("Entry path."),
    kind: z.string().describe("Entry kind."),
    status: z.string().describe("Entry status."),
    startedAt: z.string().nullable().describe("ISO time."),
    endedAt: z.string().nullable().describe("ISO time."),
    durationMs: z.number().nullable().describe("Milliseconds from start to end."),
    input: z.unknown().optional().describe("What it worked on."),
    output: z.unknown().optional().describe("What it returned."),
    error: errorShape.optional().describe("Its final error, with stack."),
    attempts: z
      .array(
        z.object({
          n: z.number().describe("Attempt number, from 1."),
          status: z.string().describe("completed, failed, timed-out, interrupted, cancelled or running."),
          startedAt: z.string().nullable().describe("ISO time."),
          endedAt: z.string().nullable().describe("ISO time."),
          error: errorShape.optional().describe("The attempt's error, with stack."),
          retryAt: z.string().nullable().describe("When the next attempt was scheduled, if any."),
        }),
      )
      .describe(
        "The attempts of a step, in order; with many, the first two and the latest (see attemptsOmitted).",
      ),
    attemptsOmitted: z
      .number()
      .optional()
      .describe(
        "Attempts left out between the first two and the latest ones shown (read the resource for all).",
      ),
    stateChange: z.unknown().optional().describe("State keys it changed: { key: [before, after] }."),
    detail: z.unknown().optional().describe("Kind-specific facts."),
    stateBefore: z.unknown().describe("The run's state just before this entry."),
    stateAfter: z.unknown().describe("The run's state just after it."),
    resource: z.string().describe("Resource holding this entry whole."),
  },
  annotations: { ...READ_ONLY, title: "Get one history entry" },
  write: false,
  async handler(args, ctx) {
    const row = await ctx.run(args.workflow, args.key);
    const e = await findEntry(ctx.engine, row.id, args.step);
    const uri = stepUri(row.workflow, row.key, e.id);
    const name = `Entry ${e.path} whole`;
    return fitAnswer((s) => {
      const err = (x: ErrorInfo) => s.error(x, uri, name);
      const all = e.attempts ?? [];
      // Many attempts: the first two and the latest ones; the middle ones shown lose their stacks.
      const keep = s.limit >= 3000 ? 30 : s.limit >= 700 ? 12 : 5;
      const picked = all.length <= keep ? all : [...all.slice(0, 2), ...all.slice(all.length - (keep - 2))];
      const omitted = all.length - picked.length;
      const shown = picked.map((a, i) => ({
        n: a.n,
        status: a.status,
        startedAt: iso(a.startedAt),
        endedAt: iso(a.endedAt),
        ...(a.error
          ? {
              error: i < 2 || i >= picked.length - 2 ? err(a.error) : { ...err(a.error), stack: undefined },
            }
          : {}),
        retryAt: iso(a.retryAt),
      }));
      if (omitted > 0) s.truncated = true;
      const structured = {
        id: e.id,
        path: e.path,
        kind: e.kind,
        status: e.status,
        startedAt: iso(e.startedAt),
        endedAt: iso(e.endedAt),
        durationMs: e.durationMs,
        ...(e.input !== undefined ? { input: s.value(e.input, uri, name) } : {}),
        ...(e.output !== undefined ? { output: s.value(e.output, uri, name) } : {}),
        ...(e.error ? { error: err(e.error) } : {}),
        attempts: shown,
        ...(omitted > 0 ? { attemptsOmitted: omitted } : {}),
        ...(e.stateChange ? { stateChange: s.value(e.stateChange, uri, name) } : {}),
        ...(e.detail ? { detail: s.value(detailIso(e.detail), uri, name) } : {}),
        stateBefore: s.value(e.stateBefore, uri, name),
        stateAfter: s.value(e.stateAfter, uri, name),
        resource: uri,
      };
      const lines = [
        `Entry #${e.id} "${e.path}" of ${row.workflow}/${row.key}: ${e.kind}, ${e.status}${e.durationMs !== null ? `, ${e.durationMs} ms` : ""}, ${all.length} attempt(s)${omitted > 0 ? ` (${omitted} in the middle left out here)` : ""}.`,
      ];
      if (e.input !== undefined) lines.push(`Input: ${brief(e.input, 200)}`);
      if (e.output !== undefined) lines.push(`Output: ${brief(e.output, 200)}`);
      for (const a of all.slice(-3))
        lines.push(`Attempt ${a.n}: ${a.status}${a.error ? ` — ${errorLine(a.error, 300)}` : ""}`);
      if (e.error) {
        lines.push(`Error: ${errorLine(e.error, 500)}`);
        if (e.error.stack) {
          const top = e.error.stack.split("\n").slice(0, 8);
          lines.push(`Stack:\n${top.map((l) => (l.length > 300 ? `${l.slice(0, 300)}…` : l)).join("\n")}`);
        }
      }
      if (e.stateChange) lines.push(`State change: ${brief(e.stateChange, 300)}`);
      return { text: lines.join("\n"), structured };
    });
  },
});
