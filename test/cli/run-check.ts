// `waymark check` as a child process, and a database for it: shared by the SQLite and PostgreSQL tests.

import { spawn } from "node:child_process";
import path from "node:path";
import { tempDb } from "../helpers.js";
import { registry } from "./payout-v1.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** `waymark check ...` as a child process. */
export function check(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return waymark(["check", ...args]);
}

/** `waymark <args>` as a child process, with its exit code and output. */
export function waymark(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

/** A database holding payout/p-1 waiting for its approval, and a finished payout/p-0. */
export async function waitingRun(db = tempDb()): Promise<string> {
  const engine = await registry.start({ database: db, deployCheck: false });
  const done = await engine.getOrCreate("payout", "p-0");
  await done.send("approvals", { by: "ann" });
  await done.result({ timeout: 10_000 });
  const run = await engine.getOrCreate("payout", "p-1");
  await engine.watchRun(run.id, (r) => r.status === "waiting", { timeout: 10_000 });
  await engine.close();
  return db;
}
