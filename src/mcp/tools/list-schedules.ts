// list_schedules: every schedule with its next firing, whether paused or orphaned, and its last run's status.

import { z } from "zod";
import { fitAnswer } from "../budget.js";
import { scheduleLine, scheduleShape } from "./schedule-view.js";
import { defineTool, READ_ONLY } from "./tool.js";

export const listSchedules = defineTool({
  name: "list_schedules",
  title: "List schedules",
  description:
    "Lists the schedules that start runs by cron or interval: for each, its workflow, when it fires, the next due time, whether it is paused or orphaned (removed from the code), and its latest firing with the run it started and that run's status. A firing skipped because the previous run was unfinished shows as skipped. Use get_run on a last run to look closer; pause_schedule and resume_schedule change one.",
  input: {},
  output: { schedules: z.array(scheduleShape).describe("Schedules by name.") },
  annotations: { ...READ_ONLY, title: "List schedules" },
  write: false,
  async handler(_args, ctx) {
    const schedules = await ctx.engine.schedules.list();
    return fitAnswer(() => ({
      text: schedules.length
        ? `${schedules.length} schedule${schedules.length === 1 ? "" : "s"}:\n${schedules.map(scheduleLine).join("\n")}`
        : `${ctx.database} has no schedules. Declare them in the application: setup({ use, schedules: { nightly: { workflow, cron: "0 3 * * *" } } }).`,
      structured: { schedules },
    }));
  },
});
