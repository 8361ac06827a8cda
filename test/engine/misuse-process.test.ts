// ctx used inside a step without awaiting the call fails that run, and only that run: the refused call's
// promise is not an unhandled rejection, which would end the whole process (Node's default) and every run in it.

import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { tempDb } from "../helpers.js";

const worker = path.join(import.meta.dirname, "misuse-worker.ts");

it("an un-awaited ctx call inside a step fails its run; dropped ctx calls never end the process", async () => {
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    ["--import", "tsx", worker, tempDb()],
    { timeout: 60_000 },
  ).catch((err: { code: number; stdout: string; stderr: string }) => {
    throw new Error(`the process exited with ${err.code}:\n${err.stderr}\n${err.stdout}`);
  });
  const lines = stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const caught = lines.filter((l) => l.misuse !== undefined);
  expect(caught.map((l) => l.misuse)).toEqual(["step", "sleep", "queue", "join", "version", "child"]);
  for (const l of caught)
    expect(l.error, l.misuse).toMatch(/ctx was used inside step "outer". A step is one recorded unit/);
  // Past the step's first await, and dropped by the workflow itself: each run ends, the process goes on.
  expect(lines.filter((l) => l.late !== undefined).map((l) => l.late)).toEqual(
    Object.values(caught).map((l) => l.misuse),
  );
  expect(lines.find((l) => l.dropped !== undefined)).toEqual({ dropped: "completed" });
  // A dropped step whose record lands after its run failed: its promise rejects, handled.
  expect(lines.find((l) => l.stopped !== undefined)).toEqual({ stopped: "failed" });
  expect(lines.at(-1)).toEqual({ good: "good done" });
  expect(stderr).not.toMatch(/Unhandled|triggerUncaughtException/);
}, 90_000);
