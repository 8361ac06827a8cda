// resume_schedule: lets a paused schedule fire again, by name (a write: hidden by --read-only).

import { scheduleSwitch } from "./schedule-view.js";

export const resumeSchedule = scheduleSwitch(
  "resume",
  "Resume a schedule",
  "Resumes a paused schedule: it fires again from its next due time after now; firings missed while it was paused are not run. Resuming a schedule that is not paused changes nothing.",
);
