// pause_schedule: stops a schedule firing, by name (a write: hidden by --read-only).

import { scheduleSwitch } from "./schedule-view.js";

export const pauseSchedule = scheduleSwitch(
  "pause",
  "Pause a schedule",
  "Pauses a schedule: it fires nothing (in every process sharing the database) until resume_schedule. Runs it already started go on. Pausing a paused schedule changes nothing. Ask the user before pausing a schedule they did not ask you to stop.",
);
