// Deep input from outside: a body nested 100,000 levels (it overflowed the stack: "a bug in Waymark" over
// MCP, 500 from the inspector) and one just past the limit are refused, with INVALID_INPUT by a real MCP
// client's session over HTTP (the session refuses the 100,000-level message unwalked, with the same
// INVALID_INPUT result) and by the inspector's API; nothing is stored and the server keeps serving.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, expect, test } from "vitest";
import { MAX_DEPTH } from "../../src/engine/depth.js";
import { nested } from "../helpers.js";
import { request, serveInspector } from "../inspector/helpers.js";
import { Closer, call, startEngine, tempDb, text, until } from "../mcp/helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const HUGE = 100_000;
/** 100,000 nested arrays (200 KB: under the inspector's 256 KB body limit); the form that overflowed the stack. */
const HUGE_JSON = `${"[".repeat(HUGE)}${"]".repeat(HUGE)}`;

test(`bodies, inputs and arguments nested deeper than ${MAX_DEPTH} levels: INVALID_INPUT over MCP and from the inspector`, async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const waiting = await engine.getOrCreate("approval", "a1", { amount: 10 });
  await until(async () => (await waiting.status()) === "waiting", "the approval to wait");
  const server = await serveInspector(closer, engine);

  const transport = new StreamableHTTPClientTransport(new URL(server.url));
  const client = new Client({ name: "deep-input-test", version: "1.0.0" });
  await client.connect(transport);
  closer.add(() => client.close());
  const address = { workflow: "approval", key: "a1" };
  const tooDeep = nested(MAX_DEPTH + 1);
  for (const [tool, args] of [
    ["send_message", { ...address, queue: "decisions", body: tooDeep }],
    ["send_message", { ...address, queue: "decisions", body: { approve: true, by: "x", extra: tooDeep } }],
    ["start_run", { workflow: "approval", key: "deep", input: tooDeep }],
    ["call_action", { ...address, action: "double", args: [tooDeep] }],
  ] as const) {
    const answer = await call(client, tool, args);
    expect(answer.isError, tool).toBe(true);
    expect(text(answer), tool).toMatch(new RegExp(`^INVALID_INPUT: .* more than ${MAX_DEPTH} levels deep`));
  }

  // 100,000 levels: more than the SDK client can serialise, so the request is written by hand in its session.
  const call100k = async (id: number, name: string, args: string) =>
    fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-session-id": transport.sessionId!,
        "mcp-protocol-version": transport.protocolVersion ?? "2025-06-18",
      },
      body: `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":"${name}","arguments":${args}}}`,
    }).then((r) => r.text());
  for (const [i, [name, args]] of [
    ["send_message", `{"workflow":"approval","key":"a1","queue":"decisions","body":${HUGE_JSON}}`],
    ["start_run", `{"workflow":"approval","key":"deep","input":${HUGE_JSON}}`],
    ["call_action", `{"workflow":"approval","key":"a1","action":"double","args":[${HUGE_JSON}]}`],
  ].entries()) {
    // Past the whole message's limit (72 levels), the session refuses it before any tool walks it,
    // with the tools' own INVALID_INPUT result.
    const answer = await call100k(100 + i, name!, args!);
    expect(answer, name).toContain('"isError":true');
    expect(answer, name).toContain(
      `INVALID_INPUT: The arguments of ${name} nest more than ${MAX_DEPTH} levels deep`,
    );
    expect(answer, name).not.toContain("Maximum call stack");
  }

  // The inspector's API: the same refusal as a 400.
  const messages = `${server.base}/api/runs/approval/a1/messages`;
  for (const raw of [
    `{"queue":"decisions","body":${HUGE_JSON}}`,
    `{"queue":"decisions","body":${JSON.stringify(tooDeep)}}`,
  ]) {
    const res = await request(messages, { raw, headers: { "content-type": "application/json" } });
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("INVALID_INPUT");
    expect(res.json.error.message).toContain(`more than ${MAX_DEPTH} levels deep`);
  }

  // Nothing was stored, and both still serve.
  expect(await engine.store.listMessages(waiting.id, { includeConsumed: true, limit: 10 })).toEqual([]);
  expect(await engine.store.findRun("approval", "deep")).toBeUndefined();
  expect(await waiting.status()).toBe("waiting");
  const ok = await call(client, "send_message", {
    ...address,
    queue: "decisions",
    body: { approve: true, by: "ann" },
  });
  expect(ok.isError).toBeFalsy();
  expect((await request(`${server.base}/api/runs/approval/a1`)).status).toBe(200);
});
