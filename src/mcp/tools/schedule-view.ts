// How list_schedules, pause_schedule and resume_schedule show a schedule: one line of text, one structured shape.

import { z } from "zod";
import type { ScheduleInfo } from "../../engine/schedules.js";
import { fitAnswer } from "../budget.js";
import { bounded, LIMITS } from "../limits.js";
import { defineTool } from "./tool.js";

/** The structured shape of one schedule. */
export const scheduleShape = z.object({
  name: z
    .string()
    .describe("The schedule's name (setup({ schedules }) key); its runs are keyed name@<due ISO>."),
  workflow: z.string().describe("The workflow each firing starts a run of."),
  spec: z
    .record(z.string(), z.unknown())
    .describe("When it fires ({ cron, timezone } or { every }) and its overlap and catchUp policies."),
  nextDue: z.string().nullable().describe("The next firing (ISO), null while paused or orphaned."),
  paused: z.boolean().describe("Paused: fires nothing until resume_schedule."),
  orphaned: z.boolean().describe("No longer in the code that last started: fires nothing."),
  last: z
    .object({ due: z.string(), outcome: z.string() })
    .nullable()
    .describe(
      'The latest firing: its due time and "started", "skipped" (the previous run was unfinished) or why it failed.',
    ),
  lastRun: z
    .object({ id: z.number(), key: z.string(), status: z.string() })
    .nullable()
    .describe(
      "The run the latest started firing created, with its status now (get_run takes its workflow and key).",
    ),
});

/** One line describing a schedule. */
export function scheduleLine(s: ScheduleInfo): string {
  const when =
    typeof s.spec.cron === "string"
      ? `cron "${s.spec.cron}" (${String(s.spec.timezone)})`
      : `every ${JSON.stringify(s.spec.every)}`;
  const state = s.orphaned
    ? "orphaned (no longer in the code): fires nothing"
    : s.paused
      ? "paused"
      : `next ${s.nextDue ?? "computed at the next pass"}`;
  const last = s.last ? `; last ${s.last.due} ${s.last.outcome}` : "; never fired";
  const run = s.lastRun ? ` → run ${s.workflow}/${s.lastRun.key} ${s.lastRun.status}` : "";
  return `- ${s.name}: ${s.workflow}, ${when}; ${state}${last}${run}`;
}

/** pause_schedule or resume_schedule: a write tool that switches one schedule by name. */
export function scheduleSwitch(verb: "pause" | "resume", title: string, description: string) {
  return defineTool({
    name: `${verb}_schedule`,
    title,
    description,
    input: {
      name: bounded(LIMITS.name, "name").describe("The schedule's name, as list_schedules shows it."),
    },
    output: { schedule: scheduleShape.describe("The schedule after the change.") },
    annotations: {
      title,
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
    write: true,
    async handler(args, ctx) {
      const schedule = await ctx.engine.schedules[verb](args.name);
      return fitAnswer(() => ({
        text: `Schedule ${schedule.name} ${verb}d.\n${scheduleLine(schedule)}`,
        structured: { schedule },
      }));
    },
  });
}
