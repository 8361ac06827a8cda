// Prompt arguments that are not strings (MCP prompt arguments are strings), through a real SDK client over
// HTTP, for every prompt the server lists: -32602 with a sentence naming the prompt, the argument and what
// it must be, not -32603 with the SDK's raw zod issue list.

import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import { afterEach, expect, test } from "vitest";
import { serveHttp } from "../../src/mcp/http.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { Closer, startEngine, tempDb } from "./helpers.js";
import { httpClient } from "./http-helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

/** The McpError a request was refused with. */
async function refusal(request: Promise<unknown>): Promise<McpError> {
  try {
    await request;
  } catch (err) {
    if (err instanceof McpError) return err;
    throw err;
  }
  throw new Error("the request was answered, not refused");
}

test("a non-string prompt argument answers -32602 naming the argument, for every prompt", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const handle = await serveHttp(() => createMcpServer(engine), { port: 0 });
  closer.add(() => handle.close());
  const { client } = await httpClient(closer, handle.url);
  const { prompts } = await client.listPrompts();
  expect(prompts.length).toBeGreaterThanOrEqual(2);
  for (const prompt of prompts) {
    for (const arg of prompt.arguments ?? []) {
      for (const [bad, shown] of [
        [42, "a number"],
        [{ a: 1 }, "an object"],
        [null, "null"],
      ] as const) {
        const base = Object.fromEntries((prompt.arguments ?? []).map((a) => [a.name, "x"]));
        const err = await refusal(
          client.getPrompt({ name: prompt.name, arguments: { ...base, [arg.name]: bad } as never }),
        );
        expect(err.code).toBe(ErrorCode.InvalidParams);
        expect(err.message).toBe(
          `MCP error -32602: The argument "${arg.name}" of prompt "${prompt.name}" must be a string (prompt arguments are strings); got ${shown}.`,
        );
      }
    }
  }
  const notObject = await refusal(
    client.getPrompt({ name: "diagnose_failed_run", arguments: ["flaky", "k"] as never }),
  );
  expect(notObject.code).toBe(ErrorCode.InvalidParams);
  expect(notObject.message).toContain(
    'The arguments of prompt "diagnose_failed_run" must be an object of strings',
  );
});
