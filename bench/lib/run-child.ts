// Spawns one measuring child (bench/child.ts) and reads its figures.

import { spawn } from "node:child_process";
import path from "node:path";
import { type ChildSpec, type Metrics, RESULT_TAG, ROOT } from "./common.js";

export interface ChildOptions {
  /** Extra node flags (--expose-gc...). */
  flags?: string[];
  timeoutMs?: number | undefined;
}

export class ChildError extends Error {}

/** Runs bench/child.ts with `spec` in a fresh node process; resolves its figures. */
export function runChild(spec: ChildSpec, options: ChildOptions = {}): Promise<Metrics> {
  const args = [
    "--max-old-space-size=8192",
    ...(options.flags ?? []),
    "--import",
    "tsx",
    path.join(ROOT, "bench/child.ts"),
    JSON.stringify(spec),
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    let err = "";
    child.stdout.on("data", (d) => (out += d));
    child.stderr.on("data", (d) => {
      err += d;
      // Progress lines of long builds go straight through.
      for (const line of String(d).split("\n"))
        if (line.startsWith("  built ")) process.stderr.write(`${line}\n`);
    });
    const timer = setTimeout(
      () => {
        child.kill("SIGKILL");
      },
      options.timeoutMs ?? 15 * 60_000,
    );
    child.on("exit", (code, signal) => {
      clearTimeout(timer);
      const line = out.split("\n").find((l) => l.startsWith(RESULT_TAG));
      if (code === 0 && line) {
        resolve(JSON.parse(line.slice(RESULT_TAG.length)) as Metrics);
        return;
      }
      const why = signal
        ? `killed by ${signal}${signal === "SIGKILL" ? " (timeout)" : ""}`
        : `exit code ${code}`;
      const tail = err.trim().split("\n").slice(-8).join("\n");
      reject(new ChildError(`${spec.scenario}/${spec.subject} ${why}\n${tail}`));
    });
  });
}
