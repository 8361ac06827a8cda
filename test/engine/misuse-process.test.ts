// ctx used inside a step without awaiting the call fails that run, and only that run: the refused call's
// promise is not an unhandled rejection, which would end the whole process (Node's default) and every run in it.

import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { expect, it } from "vitest";
import { tempDb } from "../helpers.js";

const worker = path.join(import.meta.dirname, "misuse-worker.ts");

it("an un-awaited ctx call inside a step fails its run; the process and its other runs go on", async () => {
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
  expect(lines.map((l) => l.misuse ?? "good")).toEqual([
    "step",
    "sleep",
    "queue",
    "join",
    "version",
    "child",
    "good",
  ]);
  for (const l of lines.slice(0, -1))
    expect(l.error, l.misuse).toMatch(/ctx was used inside step "outer". A step is one recorded unit/);
  expect(lines.at(-1)).toEqual({ good: "good done" });
  expect(stderr).not.toMatch(/Unhandled|triggerUncaughtException/);
}, 90_000);
