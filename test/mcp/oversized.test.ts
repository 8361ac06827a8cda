// Oversized arguments thrown at every tool, prompt, resource and completion through a real SDK client:
// every answer the client receives (JSON-RPC result or error, measured as it arrives) stays within the
// budget and says what was wrong. The tools and prompts are taken from the server's own listings, so a
// tool added later is covered without touching this file.

import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { afterEach, expect, test } from "vitest";
import { MAX_ANSWER_CHARS } from "../../src/mcp/budget.js";
import { Closer, connect, startEngine, tempDb, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const HUGE = "w".repeat(2_000_000);

/** Sizes of the JSON-RPC answers (results and errors) the client receives, in order. */
function measure(client: Client): number[] {
  const sizes: number[] = [];
  const transport = client.transport as Transport;
  const deliver = transport.onmessage!;
  transport.onmessage = (message, extra) => {
    if ("result" in message || "error" in message) sizes.push(JSON.stringify(message).length);
    deliver(message, extra);
  };
  return sizes;
}

/** What a request answered: its result's text, or its error's message. */
async function answer(request: Promise<unknown>): Promise<string> {
  try {
    const r = (await request) as Record<string, unknown>;
    return JSON.stringify(r);
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
}

/** Valid values for the arguments tools take here; any other required argument gets a plain one. */
const VALID: Record<string, unknown> = {
  workflow: "approval",
  key: "a-1",
  queue: "decisions",
  body: { approve: true, by: "ann" },
  step: "record-amount",
  action: "getState",
  dryRun: true,
  timeoutSeconds: 1,
};

type JsonSchema = {
  type?: string | string[];
  enum?: unknown[];
  anyOf?: JsonSchema[];
  properties?: Record<string, JsonSchema>;
};

/** An enum refuses a long string as "not one of": the message names the argument, not a length. */
function isEnum(schema: JsonSchema): boolean {
  return Array.isArray(schema.enum) || (schema.anyOf ?? []).some(isEnum);
}

function takesString(schema: JsonSchema): boolean {
  const types = [schema.type ?? []].flat();
  return types.includes("string") || (schema.anyOf ?? []).some(takesString);
}

function plain(schema: JsonSchema): unknown {
  const type = [schema.type ?? "string"].flat()[0];
  return type === "number" || type === "integer"
    ? 1
    : type === "boolean"
      ? false
      : type === "array"
        ? []
        : "x";
}

test("an oversized string argument to any tool is refused within the budget, naming the argument and its bound", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "a-1", { amount: 5 });
  await until(async () => (await engine.store.findRun("approval", "a-1"))?.status === "waiting", "wait");
  const client = await connect(closer, engine);
  const sizes = measure(client);
  const { tools } = await client.listTools();
  let tried = 0;
  for (const tool of tools) {
    const schema = tool.inputSchema as JsonSchema & { required?: string[] };
    const props = schema.properties ?? {};
    const base: Record<string, unknown> = {};
    for (const name of schema.required ?? []) base[name] = VALID[name] ?? plain(props[name]!);
    for (const [name, prop] of Object.entries(props)) {
      if (!takesString(prop)) continue;
      tried++;
      const text = await answer(client.callTool({ name: tool.name, arguments: { ...base, [name]: HUGE } }));
      const label = `${tool.name}.${name}`;
      expect(sizes.at(-1), label).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      expect(text, label).toContain(
        isEnum(prop) ? name : `${name} is too long: 2,000,000 characters, at most`,
      );
    }
  }
  expect(tried).toBeGreaterThanOrEqual(20);

  // A tool name the server does not have, 2 MB long: refused before the SDK echoes it in "not found".
  const unknown = await answer(client.callTool({ name: HUGE, arguments: {} }));
  expect(sizes.at(-1)).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
  expect(unknown).toContain("The tool name is too long: 2,000,000 characters, at most 200");

  // Message bodies are bounded by the transport, not by a few hundred characters: the answer still fits.
  for (const [name, args] of [
    [
      "send_message",
      { workflow: "approval", key: "a-1", queue: "decisions", body: { approve: true, by: HUGE } },
    ],
    ["call_action", { workflow: "approval", key: "a-1", action: "double", args: [HUGE] }],
    ["start_run", { workflow: "sleeper", key: "big-input", input: { blob: HUGE } }],
  ] as const) {
    await answer(client.callTool({ name, arguments: args }));
    expect(sizes.at(-1), name).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
  }
});

test("oversized prompt arguments, resource URIs and completions answer within the budget and say why", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("flaky", "f-1");
  await until(async () => (await engine.store.findRun("flaky", "f-1"))?.status === "failed", "fail");
  const client = await connect(closer, engine);
  const sizes = measure(client);
  const last = () => sizes.at(-1)!;

  const { prompts } = await client.listPrompts();
  expect(prompts.length).toBeGreaterThanOrEqual(2);
  for (const prompt of prompts) {
    const base = Object.fromEntries(
      (prompt.arguments ?? []).map((a) => [a.name, a.name === "key" ? "f-1" : "flaky"]),
    );
    for (const arg of prompt.arguments ?? []) {
      const text = await answer(
        client.getPrompt({ name: prompt.name, arguments: { ...base, [arg.name]: HUGE } }),
      );
      expect(last(), `${prompt.name}.${arg.name}`).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      expect(text, `${prompt.name}.${arg.name}`).toContain(`${arg.name} is too long: 2,000,000 characters`);
    }
  }
  expect(await answer(client.getPrompt({ name: HUGE, arguments: {} }))).toContain(
    "The prompt name is too long: 2,000,000 characters",
  );
  expect(last()).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
  const unknownRun = await answer(
    client.getPrompt({ name: "diagnose_failed_run", arguments: { workflow: "flaky", key: "k".repeat(512) } }),
  );
  expect(last()).toBeLessThanOrEqual(2000);
  expect(unknownRun).toContain("There is no run");

  const { resourceTemplates } = await client.listResourceTemplates();
  for (const t of resourceTemplates) {
    for (const variable of ["workflow", "key", "id"]) {
      if (!t.uriTemplate.includes(`{${variable}}`)) continue;
      const uri = t.uriTemplate
        .replace(`{${variable}}`, HUGE)
        .replace("{workflow}", "flaky")
        .replace("{key}", "f-1")
        .replace("{id}", "1");
      const read = await answer(client.readResource({ uri }));
      expect(last(), `read ${t.uriTemplate} ${variable}`).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      expect(read).toContain("The resource URI is too long: 2,000,0");
      const sub = await answer(client.subscribeResource({ uri }));
      expect(last(), `subscribe ${t.uriTemplate} ${variable}`).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      expect(sub).toContain("The resource URI is too long: 2,000,0");

      const name = variable === "id" ? "id" : variable;
      await answer(
        client.complete({
          ref: { type: "ref/resource", uri: t.uriTemplate },
          argument: { name, value: HUGE },
          context: { arguments: { workflow: HUGE, key: HUGE } },
        }),
      );
      expect(last(), `complete ${t.uriTemplate} ${variable}`).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    }
  }
  const nowhere = await answer(client.readResource({ uri: `waymark://nowhere/${HUGE}` }));
  expect(last()).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
  expect(nowhere).toContain("The resource URI is too long: 2,000,0");
  for (const prompt of prompts) {
    for (const arg of prompt.arguments ?? []) {
      await answer(
        client.complete({
          ref: { type: "ref/prompt", name: prompt.name },
          argument: { name: arg.name, value: HUGE },
          context: { arguments: { workflow: HUGE } },
        }),
      );
      expect(last(), `complete ${prompt.name}.${arg.name}`).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    }
  }
});

test("listings and completions of many long keys fit the budget, cut at the end", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const prefix = "k".repeat(490);
  for (let i = 0; i < 60; i++) await engine.getOrCreate("sleeper", `${prefix}-${String(i).padStart(3, "0")}`);
  const client = await connect(closer, engine);
  const sizes = measure(client);

  const { resources } = await client.listResources();
  expect(sizes.at(-1)).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
  expect(resources.length).toBeGreaterThan(5);
  expect(resources[0]!.uri).toBe("waymark://workflows");

  const done = await client.complete({
    ref: { type: "ref/resource", uri: "waymark://runs/{workflow}/{key}" },
    argument: { name: "key", value: prefix },
    context: { arguments: { workflow: "sleeper" } },
  });
  expect(sizes.at(-1)).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
  expect(done.completion.values.length).toBeGreaterThan(5);
  expect(done.completion.values.length).toBeLessThan(60);
  expect(done.completion.hasMore).toBe(true);
  for (const v of done.completion.values) expect(v.startsWith(prefix)).toBe(true);
});
