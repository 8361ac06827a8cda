// Every tool, in the order clients list them.

import { callAction } from "./call-action.js";
import { cancelRun } from "./cancel-run.js";
import { cancelRuns } from "./cancel-runs.js";
import { compareRuns } from "./compare-runs.js";
import { diagnoseRun } from "./diagnose-run.js";
import { getHistory } from "./get-history.js";
import { getRun } from "./get-run.js";
import { getStep } from "./get-step.js";
import { listAudit } from "./list-audit.js";
import { listFailures } from "./list-failures.js";
import { listRuns } from "./list-runs.js";
import { listSchedules } from "./list-schedules.js";
import { listWorkflows } from "./list-workflows.js";
import { pauseSchedule } from "./pause-schedule.js";
import { replayRun } from "./replay-run.js";
import { replayRuns } from "./replay-runs.js";
import { resumeSchedule } from "./resume-schedule.js";
import { reviewApprovals } from "./review-approvals.js";
import { sendMessage } from "./send-message.js";
import { startRun } from "./start-run.js";
import { waitForRun } from "./wait-for-run.js";

export const TOOLS = [
  listWorkflows,
  listRuns,
  getRun,
  getHistory,
  getStep,
  diagnoseRun,
  compareRuns,
  listFailures,
  listSchedules,
  reviewApprovals,
  listAudit,
  sendMessage,
  replayRun,
  replayRuns,
  startRun,
  cancelRun,
  cancelRuns,
  pauseSchedule,
  resumeSchedule,
  callAction,
  waitForRun,
] as const;
