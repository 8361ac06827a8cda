// A transport wrapper around every session, in both directions. Requests whose names or URIs pass their
// bound are refused before the SDK looks at them (it would match, search and echo them). Every answer
// the session sends, JSON-RPC error or result, is held to the budget whoever built it (our handlers, or
// the SDK: "Tool <name> not found", argument validation). Handlers fit their own answers; this is the net.
//
// IMPORTANT: resources/read results pass whole: resources are where answers link for values too large
// for them. Everything else is cut to fit: error messages keep their beginning and end, tool results go
// through withinBudget, completions and listings lose items from their end, prompt texts are cut.

import type { Transport, TransportSendOptions } from "@modelcontextprotocol/sdk/shared/transport.js";
import {
  type CallToolResult,
  ErrorCode,
  type JSONRPCMessage,
  type MessageExtraInfo,
} from "@modelcontextprotocol/sdk/types.js";
import { MAX_DEPTH, tooDeepAt } from "../engine/depth.js";
import { log } from "../log.js";
import { answerSize, cutText, MAX_ANSWER_CHARS, MAX_ERROR_CHARS, withinBudget } from "./budget.js";
import { count, LIMITS } from "./limits.js";

type Json = Record<string, unknown>;

/** An error's message cut, its data dropped when large: a JSON-RPC error is a short sentence. */
function fitError(error: { code: number; message: string; data?: unknown }) {
  const { data, ...rest } = error;
  // An McpError's message starts with "MCP error <code>: ", and the client's SDK adds that again.
  const message = cutText(String(error.message ?? "").replace(/^MCP error -?\d+: /, ""), MAX_ERROR_CHARS);
  return answerSize(data) <= 2000
    ? { ...rest, message, ...(data === undefined ? {} : { data }) }
    : { ...rest, message };
}

/** The longest prefix of `items` that keeps `wrap(prefix)` within the budget. */
function fitList<T>(items: T[], wrap: (items: T[]) => unknown): T[] {
  let lo = 0;
  let hi = items.length;
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (answerSize(wrap(items.slice(0, mid))) <= MAX_ANSWER_CHARS) lo = mid;
    else hi = mid - 1;
  }
  return items.slice(0, lo);
}

/** A result held to the budget, by its shape (a response does not name its method). */
function fitResult(result: Json): Json {
  if (answerSize(result) <= MAX_ANSWER_CHARS) return result;
  if (Array.isArray(result.contents)) return result; // resources/read: values whole, by design
  if (Array.isArray(result.content)) return withinBudget(result as CallToolResult) as Json;
  const completion = result.completion as { values?: string[] } | undefined;
  if (completion && Array.isArray(completion.values)) {
    const values = fitList(completion.values, (v) => ({
      ...result,
      completion: { ...completion, values: v },
    }));
    return { ...result, completion: { ...completion, values, hasMore: true } };
  }
  if (Array.isArray(result.resources)) {
    return { ...result, resources: fitList(result.resources, (r) => ({ ...result, resources: r })) };
  }
  if (Array.isArray(result.messages)) {
    const texts = result.messages.length;
    const room = Math.floor((MAX_ANSWER_CHARS - 1000) / Math.max(1, texts));
    const messages = (result.messages as Array<{ content?: { type?: string; text?: string } }>).map((m) =>
      m.content?.type === "text" && typeof m.content.text === "string"
        ? { ...m, content: { ...m.content, text: cutText(m.content.text, room) } }
        : m,
    );
    return { ...result, messages };
  }
  // The server's own listings are as large as its code makes them, whatever the client sends.
  if (Array.isArray(result.tools) || Array.isArray(result.prompts) || Array.isArray(result.resourceTemplates))
    return result;
  log(
    "error",
    "waymark mcp",
    `an answer of ${answerSize(result)} characters passes the ${MAX_ANSWER_CHARS}-character budget (keys: ${Object.keys(result).join(", ")})`,
  );
  return result;
}

/** The message as it may leave: errors and results held to the budget, requests and notifications as they are. */
export function fitMessage(message: JSONRPCMessage): JSONRPCMessage {
  if ("error" in message && message.error) return { ...message, error: fitError(message.error) };
  if ("result" in message && message.result) return { ...message, result: fitResult(message.result) };
  return message;
}

/**
 * Most levels of nesting in a whole incoming JSON-RPC message: a value's own limit (MAX_DEPTH, 64) plus
 * room for the envelope around it (message, params, arguments, an args array...). Deeper messages are
 * refused before the SDK touches them: it serialises some (an unknown response's id) recursively.
 */
export const MAX_MESSAGE_DEPTH = MAX_DEPTH + 8;

/** Why a message is refused for its nesting, or null when it fits. */
function tooDeep(message: JSONRPCMessage): string | null {
  const at = tooDeepAt(message, MAX_MESSAGE_DEPTH);
  if (at === null) return null;
  return `Invalid Request: the message nests deeper than ${MAX_MESSAGE_DEPTH} levels (at ${cutText(at.replace(/^\./, ""), 200)}); this server reads messages of at most ${MAX_MESSAGE_DEPTH} levels, values inside them at most ${MAX_DEPTH}. Send a flatter value.`;
}

/** The INVALID_INPUT text for a tools/call whose arguments nest past the message's limit. */
function deepArguments(message: JSONRPCMessage): string {
  const params = ("params" in message ? message.params : undefined) as { name?: unknown } | undefined;
  const name = typeof params?.name === "string" ? ` of ${cutText(params.name, 100)}` : "";
  const at = tooDeepAt(message, MAX_MESSAGE_DEPTH) ?? "";
  return `INVALID_INPUT: The arguments${name} nest more than ${MAX_DEPTH} levels deep (at ${cutText(at.replace(/^\.?params\.?/, ""), 200)}); values may nest at most ${MAX_DEPTH} levels. Nothing was done. Send a flatter value.`;
}

/** Strings of a request that the SDK would read before any handler of ours: each with its bound. */
function tooLong(message: JSONRPCMessage): string | null {
  if (!("method" in message) || !("id" in message)) return null;
  const params = (message.params ?? {}) as Record<string, unknown>;
  const check = (value: unknown, max: number, what: string) =>
    typeof value === "string" && value.length > max
      ? `${what} is too long: ${count(value.length)} characters, at most ${count(max)} are accepted.`
      : null;
  switch (message.method) {
    case "resources/read":
    case "resources/subscribe":
    case "resources/unsubscribe":
      return check(params.uri, LIMITS.uri, "The resource URI");
    case "tools/call":
      return check(params.name, LIMITS.name, "The tool name");
    case "prompts/get":
      return check(params.name, LIMITS.name, "The prompt name");
    case "completion/complete": {
      const ref = (params.ref ?? {}) as Record<string, unknown>;
      const argument = (params.argument ?? {}) as Record<string, unknown>;
      return (
        check(ref.uri, LIMITS.uri, "The resource template") ??
        check(ref.name, LIMITS.name, "The prompt name") ??
        check(argument.name, LIMITS.name, "The argument name")
      );
    }
    default:
      return null;
  }
}

/** What a JSON value is, for a sentence: "a number", "an object", "null". */
function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  const type = typeof value;
  return type === "object" || type === "undefined" ? `an ${type}` : `a ${type}`;
}

/**
 * Prompt arguments that are not strings: MCP prompt arguments are strings, and the SDK's request schema
 * would answer -32603 with its raw issue list. Checked for every prompt, before the SDK parses the request.
 */
function badPromptArguments(message: JSONRPCMessage): string | null {
  if (!("method" in message) || message.method !== "prompts/get") return null;
  const params = (message.params ?? {}) as Record<string, unknown>;
  const args = params.arguments;
  const prompt = typeof params.name === "string" ? ` of prompt ${JSON.stringify(params.name)}` : "";
  if (args === undefined) return null;
  if (typeof args !== "object" || args === null || Array.isArray(args))
    return `The arguments${prompt} must be an object of strings, like {"workflow": "orders"}; got ${kindOf(args)}.`;
  for (const [name, value] of Object.entries(args)) {
    if (typeof value !== "string")
      return `The argument ${JSON.stringify(cutText(name, LIMITS.name))}${prompt} must be a string (prompt arguments are strings); got ${kindOf(value)}.`;
  }
  return null;
}

/** A transport that refuses oversized requests and holds every answer to the budget; see the top of the file. */
export class SessionGuard implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: (<T extends JSONRPCMessage>(message: T, extra?: MessageExtraInfo) => void) | undefined;

  constructor(private readonly inner: Transport) {
    this.onclose = inner.onclose;
    this.onerror = inner.onerror;
    this.onmessage = inner.onmessage;
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      // Nothing a message does may throw out of the transport's data handler (it would end the process).
      try {
        this.receive(message, extra);
      } catch (err) {
        log(
          "error",
          "waymark mcp",
          `handling an incoming message threw, the session goes on: ${cutText(String(err), 300)}`,
        );
      }
    };
  }

  private receive(message: JSONRPCMessage, extra?: MessageExtraInfo): void {
    const deep = tooDeep(message);
    if (deep !== null) {
      if ("method" in message && "id" in message && message.method === "tools/call") {
        // A tool call's arguments are a value: refused as the tools refuse one (INVALID_INPUT), unwalked.
        this.answerToolError(message.id, deepArguments(message));
      } else if ("method" in message && "id" in message) {
        this.refuse(message.id, ErrorCode.InvalidRequest, deep);
      } else {
        const kind = "method" in message ? "notification" : "response";
        log("warn", "waymark mcp", `dropped a ${kind} nested deeper than ${MAX_MESSAGE_DEPTH} levels`);
      }
      return;
    }
    const refusal = tooLong(message) ?? badPromptArguments(message);
    if (refusal === null || !("id" in message)) {
      this.onmessage?.(message, extra);
      return;
    }
    this.refuse(message.id, ErrorCode.InvalidParams, refusal);
  }

  private answerToolError(id: string | number, text: string): void {
    this.inner
      .send({ jsonrpc: "2.0", id, result: { content: [{ type: "text", text }], isError: true } })
      .catch((err: unknown) => this.onerror?.(err as Error));
  }

  private refuse(id: string | number | undefined, code: number, message: string): void {
    this.inner
      .send({ jsonrpc: "2.0", id, error: { code, message } })
      .catch((err: unknown) => this.onerror?.(err as Error));
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }

  start(): Promise<void> {
    return this.inner.start();
  }

  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(fitMessage(message), options);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}
