// Every tool, in the order clients list them.

import { callAction } from "./call-action.js";
import { cancelRun } from "./cancel-run.js";
import { diagnoseRun } from "./diagnose-run.js";
import { getHistory } from "./get-history.js";
import { getRun } from "./get-run.js";
import { getStep } from "./get-step.js";
import { listFailures } from "./list-failures.js";
import { listRuns } from "./list-runs.js";
import { listWorkflows } from "./list-workflows.js";
import { replayRun } from "./replay-run.js";
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
  listFailures,
  sendMessage,
  replayRun,
  startRun,
  cancelRun,
  callAction,
  waitForRun,
] as const;
