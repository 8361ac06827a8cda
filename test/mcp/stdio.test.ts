// `waymark mcp --stdio` as a real process fed raw bytes: a line over the read limit, invalid JSON, a batch
// and a non-message each get a JSON-RPC error (with the request's id when it could be read), a line is
// logged to stderr, and the session keeps serving the lines after them.

import { afterEach, expect, test } from "vitest";
import { Closer, tempDb } from "./helpers.js";
import { request, spawnStdio as spawn } from "./stdio-helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

/** The longest line the server reads (DEFAULT_MAX_LINE_BYTES, the SDK's buffer size too). */
const MAX_LINE_BYTES = 10 * 1024 * 1024;

test("over-long lines, invalid JSON, batches and non-messages are answered with errors and the session goes on", async () => {
  const s = spawn(closer, tempDb(closer));
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
