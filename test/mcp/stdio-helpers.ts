// The CLI's `mcp --stdio` as a real child process fed raw lines, with what it answered and its stderr.

import { type ChildProcess, spawn } from "node:child_process";
import { type Closer, ROOT, until } from "./helpers.js";

export type Answer = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

/**
 * The CLI over stdio, with what it answered (one JSON value per stdout line) and its stderr; `node` flags and
 * environment variables are added to the child's.
 */
export function spawnStdio(
  closer: Closer,
  db: string,
  extra: { nodeFlags?: string[]; env?: Record<string, string> } = {},
) {
  const child: ChildProcess = spawn(
    process.execPath,
    [
      ...(extra.nodeFlags ?? []),
      "--import",
      "tsx",
      "src/cli/main.ts",
      "mcp",
      "--stdio",
      "--create",
      "--db",
      db,
    ],
    { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"], env: { ...process.env, ...extra.env } },
  );
  closer.add(() => {
    if (child.exitCode === null) child.kill("SIGKILL");
  });
  const answers: Answer[] = [];
  let pending = "";
  let stderr = "";
  child.stdout!.on("data", (d: Buffer) => {
    pending += d.toString("utf8");
    for (let nl = pending.indexOf("\n"); nl >= 0; nl = pending.indexOf("\n")) {
      answers.push(JSON.parse(pending.slice(0, nl)) as Answer);
      pending = pending.slice(nl + 1);
    }
  });
  child.stderr!.on("data", (d: Buffer) => (stderr += d.toString("utf8")));
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  /** Writes raw bytes to the server's stdin, waiting for the pipe to drain. */
  const write = (data: string | Buffer) =>
    new Promise<void>((resolve, reject) => {
      child.stdin!.write(data, (err) => (err ? reject(err) : resolve()));
    });
  const answerTo = (id: unknown) =>
    until(() => answers.find((a) => a.id === id), `the answer to ${String(id)}`, 60_000);
  return { child, answers, write, answerTo, exited, stderr: () => stderr };
}

/** One JSON-RPC request as a stdin line. */
export const request = (id: unknown, method: string, params: Record<string, unknown> = {}) =>
  `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;

/** Sends initialize and the initialized notification, and waits for the answer. */
export async function initialize(s: ReturnType<typeof spawnStdio>): Promise<void> {
  await s.write(
    request("init", "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    }),
  );
  await s.answerTo("init");
  await s.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
}
