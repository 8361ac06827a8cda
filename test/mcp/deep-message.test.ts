// Messages nested far deeper than any value may be (5,000 and 100,000 levels) in a response's result, an
// error's data, a request's params and a notification's params: over a real stdio process and real HTTP,
// requests are answered -32600 naming the limit (a tools/call an INVALID_INPUT result, as a tool refuses a
// value), responses and notifications are dropped with a stderr
// line, and the session answers the ping after them (the SDK's recursive JSON.stringify ended the stdio
// process, and HTTP answered -32700 with the RangeError).

import { afterEach, expect, test } from "vitest";
import { MAX_MESSAGE_DEPTH } from "../../src/mcp/guard.js";
import { serveHttp } from "../../src/mcp/http.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { Closer, startEngine, tempDb, until } from "./helpers.js";
import { INIT, raw } from "./http-helpers.js";
import { initialize, request, spawnStdio } from "./stdio-helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

/** `{"a":{"a":...1...}}` nested `n` levels. */
const deep = (n: number) => `${'{"a":'.repeat(n)}1${"}".repeat(n)}`;

/** Raw message lines nested `n` levels deep; the request ones carry the id `req-<n>-<where>`. */
function attacks(n: number) {
  const v = deep(n);
  return {
    dropped: [
      `{"jsonrpc":"2.0","id":"r","result":${v}}`,
      `{"jsonrpc":"2.0","id":"e","error":{"code":1,"message":"x","data":${v}}}`,
      `{"jsonrpc":"2.0","method":"notifications/progress","params":${v}}`,
    ],
    refused: [
      `{"jsonrpc":"2.0","id":"req-${n}-params","method":"ping","params":${v}}`,
      `{"jsonrpc":"2.0","id":"req-${n}-args","method":"tools/call","params":{"name":"list_runs","arguments":{"workflow":${v}}}}`,
    ],
  };
}

const LIMIT = new RegExp(`^Invalid Request: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels`);

test("stdio: deeply nested responses, notifications and requests neither kill nor wedge the session", async () => {
  const s = spawnStdio(closer, tempDb(closer));
  await initialize(s);
  for (const n of [5_000, 100_000]) {
    const { dropped, refused } = attacks(n);
    for (const line of [...dropped, ...refused]) await s.write(`${line}\n`);
    const params = await s.answerTo(`req-${n}-params`);
    expect(params.error?.code).toBe(-32600);
    expect(params.error?.message).toMatch(LIMIT);
    // A tool call's arguments are refused as a tool refuses a value: an INVALID_INPUT result.
    const args = await s.answerTo(`req-${n}-args`);
    expect((args.result as { isError?: boolean } | undefined)?.isError).toBe(true);
    expect(JSON.stringify(args.result)).toMatch(
      /INVALID_INPUT: The arguments of list_runs nest more than 64 levels deep/,
    );
    await s.write(request(`ping-${n}`, "ping"));
    expect((await s.answerTo(`ping-${n}`)).result).toEqual({});
  }
  expect(s.child.exitCode).toBe(null);
  expect(s.stderr()).toContain(`dropped a response nested deeper than ${MAX_MESSAGE_DEPTH} levels`);
  expect(s.stderr()).toContain(`dropped a notification nested deeper than ${MAX_MESSAGE_DEPTH} levels`);
  expect(s.stderr()).not.toContain("Maximum call stack");
  // Nothing answered the dropped lines.
  expect(s.answers.some((a) => a.id === "r" || a.id === "e")).toBe(false);
  s.child.stdin!.end();
  expect(await s.exited).toBe(0);
});

test("HTTP: deeply nested responses and notifications are dropped (202), requests answered -32600, tool calls INVALID_INPUT", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const handle = await serveHttp(() => createMcpServer(engine), { port: 0 });
  closer.add(() => handle.close());
  const init = await raw(handle.url, { body: INIT });
  expect(init.status).toBe(200);
  const headers = { "mcp-session-id": init.sessionId, "mcp-protocol-version": "2025-06-18" };
  for (const n of [5_000, 100_000]) {
    const { dropped, refused } = attacks(n);
    for (const body of dropped) {
      const answer = await raw(handle.url, { headers, body });
      expect(answer.body).not.toContain("Maximum call stack");
      expect(answer.status).toBe(202);
    }
    const [params, args] = refused;
    const answer = await raw(handle.url, { headers, body: params! });
    expect(answer.body).not.toContain("Maximum call stack");
    expect(answer.body).toContain('"code":-32600');
    expect(answer.body).toContain(`the message nests deeper than ${MAX_MESSAGE_DEPTH} levels`);
    const tool = await raw(handle.url, { headers, body: args! });
    expect(tool.body).not.toContain("Maximum call stack");
    expect(tool.body).toContain('"isError":true');
    expect(tool.body).toContain("INVALID_INPUT: The arguments of list_runs nest more than 64 levels deep");
    const ping = await raw(handle.url, { headers, body: request(`ping-${n}`, "ping") });
    expect(ping.body).toContain(`{"result":{},"jsonrpc":"2.0","id":"ping-${n}"}`);
  }
  await until(() => handle.sessionCount() === 1, "the session to stay open");
});
