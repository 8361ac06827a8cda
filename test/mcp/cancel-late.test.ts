// cancel_run through a real MCP client over stdio while a step that ignores its signal runs: the step
// returning afterwards adds nothing, so the count equals the steps recorded completed (it was 20 for 19).

import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { attachEngine, Closer, call, stdioClient, tempDb, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

test("cancel_run during a step that ignores its signal: its late return changes nothing", async () => {
  const db = tempDb(closer);
  const release = path.join(path.dirname(db), "release");
  const { client, stderr } = await stdioClient(closer, [
    "--create",
    "--db",
    db,
    "--registry",
    "test/mcp/stubborn-registry.ts",
  ]);

  const input = { steps: 40, holdAt: 19, release };
  await call(client, "start_run", { workflow: "counter", key: "c-1", input });
  await until(() => stderr().includes("inc-19 started"), "the 20th step to start");
  const cancelled = await call(client, "cancel_run", { workflow: "counter", key: "c-1" });
  expect(cancelled.structuredContent).toMatchObject({ outcome: "cancelled" });
  fs.writeFileSync(release, "");
  await until(() => stderr().includes("inc-19 returned"), "the 20th step to return after the cancel");
  // Anything the late step queued went into the server's write queue as it returned; a run created
  // after that commits in the same or a later batch, so once it exists the late writes (if any) are on disk.
  const barrier = await call(client, "start_run", {
    workflow: "counter",
    key: "barrier",
    input: { steps: 0, holdAt: -1, release },
  });
  expect(barrier.isError).toBeFalsy();

  const engine = await attachEngine(closer, db);
  const run = await engine.get("counter", "c-1");
  const history = await run.history();
  const completed = history.filter((e) => e.status === "completed");
  expect(completed).toHaveLength(19);
  expect((await run.info()).state).toEqual({ count: 19 });
  expect(history.map((e) => [e.path, e.status]).at(-1)).toEqual(["inc-19", "cancelled"]);
  expect(history.at(-1)!.attempts).toMatchObject([{ n: 1, status: "cancelled" }]);
  expect(await run.status()).toBe("cancelled");
});
