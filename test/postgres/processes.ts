// Worker processes for the PostgreSQL tests: spawned with tsx, stopped after the test.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { onCleanup, until } from "../helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const SCRIPT = path.join(import.meta.dirname, "worker.ts");

export interface WorkerOptions {
  ledger: string;
  machine?: string;
  leaseMs?: number;
  workflows?: string[];
  create?: Array<[string, string, unknown]>;
  gate?: string;
  every?: string;
}

export interface Worker {
  proc: ChildProcess;
  pid: number;
  exited: Promise<void>;
  output(): string;
}

/** Starts a worker and resolves once it printed "ready" (its runs created). */
export async function startWorker(url: string, options: WorkerOptions): Promise<Worker> {
  const proc = spawn(process.execPath, ["--import", "tsx", SCRIPT, url, JSON.stringify(options)], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  onCleanup(async () => {
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill("SIGTERM");
    const timer = setTimeout(() => proc.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  });
  await until(() => out.includes("ready") || proc.exitCode !== null, `worker ${proc.pid} to start`, 60_000);
  if (proc.exitCode !== null) throw new Error(`worker exited with ${proc.exitCode}: ${out}`);
  return { proc, pid: proc.pid!, exited, output: () => out };
}

/** Ledger lines as [pid, what, ...rest]. */
export function readLedger(file: string): string[][] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => l.split(" "));
}
