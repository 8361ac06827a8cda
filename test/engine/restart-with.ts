// For tests of code that changed under an unfinished run: records a run with one version of its code until it
// sleeps, then restarts the same workflow name and version with other code, past the sleep.

import { waitForStatus } from "../../fixtures/wait.js";
import { FakeClock, type RunHandle, setup, type WorkflowContext, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";

/** Runs `before` until it sleeps, restarts with `after`'s code and advances past the sleep; the run's handle. */
export async function restartWith(
  before: (ctx: WorkflowContext) => Promise<unknown>,
  after: (ctx: WorkflowContext) => Promise<unknown>,
): Promise<RunHandle> {
  const db = tempDb();
  const clock = new FakeClock();
  const first = await setup({ use: { wf: workflow({ run: before }) } }).start({ database: db, clock });
  const run = await first.getOrCreate("wf", "k");
  await waitForStatus(first, run, ["sleeping"]);
  await first.close();
  const second = closeLater(
    await setup({ use: { wf: workflow({ run: after }) } }).start({ database: db, clock }),
  );
  clock.advance(60_000);
  return second.get("wf", "k");
}
