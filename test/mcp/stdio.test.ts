// `waymark mcp --stdio` as a real process fed raw bytes: a line over the read limit, invalid JSON, a batch
// and a non-message each get a JSON-RPC error (with the request's id when it could be read), a line is
// logged to stderr, and the session keeps serving the lines after them.

import { type ChildProcess, spawn } from "node:child_process";
import { afterEach, expect, test } from "vitest";
import { Closer, ROOT, tempDb, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

type Answer = { id?: unknown; result?: unknown; error?: { code: number; message: string } };

/** The CLI over stdio, with what it answered (one JSON value per stdout line) and its stderr. */
function spawnStdio(db: string) {
  const child: ChildProcess = spawn(
    process.execPath,
    ["--import", "tsx", "src/cli/main.ts", "mcp", "--stdio", "--create", "--db", db],
    { cwd: ROOT, stdio: ["pipe", "pipe", "pipe"] },
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

/** The longest line the server reads (DEFAULT_MAX_LINE_BYTES, the SDK's buffer size too). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

const request = (id: unknown, method: string, params: Record<string, unknown> = {}) =>
  `${JSON.stringify({ jsonrpc: "2.0", id, method, params })}\n`;

test("over-long lines, invalid JSON, batches and non-messages are answered with errors and the session goes on", async () => {
  const s = spawnStdio(tempDb(closer));
  await s.write(
    request(1, "initialize", {
      protocolVersion: "2025-06-18",
      capabilities: {},
      clientInfo: { name: "raw", version: "1" },
    }),
  );
  expect((await s.answerTo(1)).result).toBeTruthy();
  await s.write(`${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);

  // A line over the read limit (the SDK's 10 MB buffer closed the session and the process exited 0),
  // written in pieces: its id comes first, so the error answers that request.
  const pad = "p".repeat(MAX_LINE_BYTES + 500_000);
  const long = request(2, "tools/call", { name: "list_runs", arguments: { workflow: pad } });
  for (let i = 0; i < long.length; i += 1 << 20) await s.write(long.slice(i, i + (1 << 20)));
  const tooLarge = await s.answerTo(2);
  expect(tooLarge.error?.code).toBe(-32600);
  expect(tooLarge.error?.message).toMatch(
    /^Request too large: the line held 10,[\d,]+ bytes, more than the 10,485,760/,
  );

  // Its id after the padding, a string: read as the line streams by, never held.
  await s.write(
    `{"jsonrpc":"2.0","method":"ping","params":{"pad":"${pad}","nested":{"id":7}},"id":"late"}\n`,
  );
  expect((await s.answerTo("late")).error?.code).toBe(-32600);

  await s.write('{"jsonrpc": "2.0", "id": 3, "method": \n');
  await s.write(`[${request(4, "ping").trim()}, ${request(5, "ping").trim()}]\n`);
  await s.write('{"jsonrpc": "2.0", "id": 6}\n');
  await s.write(request(8, "ping"));
  expect((await s.answerTo(8)).result).toEqual({});

  const nulls = s.answers.filter((a) => a.id === null);
  expect(nulls.map((a) => a.error?.code)).toEqual([-32700, -32600]);
  expect(nulls[0]!.error!.message).toMatch(/^Parse error: the line is not JSON/);
  expect(nulls[1]!.error!.message).toContain(
    "JSON-RPC batches (arrays of messages) are not supported in MCP 2025-06-18",
  );
  const invalid = await s.answerTo(6);
  expect(invalid.error?.code).toBe(-32600);
  expect(invalid.error?.message).toMatch(/^Invalid Request: not a JSON-RPC 2\.0 message/);
  expect(s.answers.some((a) => a.id === 4 || a.id === 5 || a.id === 3)).toBe(false);

  // Still a working MCP session: a tool answers.
  await s.write(request(9, "tools/call", { name: "list_workflows", arguments: {} }));
  expect(JSON.stringify((await s.answerTo(9)).result)).toContain("no workflows yet");
  expect(s.stderr()).toMatch(/refused a line from stdin \(-32600, request id 2\): Request too large/);
  expect(s.stderr()).toMatch(/refused a line from stdin \(-32700\): Parse error/);
  expect(s.child.exitCode).toBe(null);

  s.child.stdin!.end();
  expect(await s.exited).toBe(0);
});
