// Domain failures as tool results: isError, with text that says what happened and what to call next.

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { type ErrorCode, sentence } from "../errors.js";
import { log } from "../log.js";
import { cutText, MAX_ERROR_CHARS } from "./budget.js";

/** A failure the MCP layer itself reports (unknown run, no code here, refused replay...). */
export class ToolError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = "ToolError";
  }
}

/** A Waymark or MCP-layer error (duck-typed: the engine may be loaded from another copy of the package). */
export function domainCode(err: unknown): string | null {
  if (!(err instanceof Error)) return null;
  const code = (err as { code?: unknown }).code;
  return typeof code === "string" && /^[A-Z_]+$/.test(code) ? code : null;
}

/** The isError result for anything a tool handler threw. */
export function errorResult(err: unknown): CallToolResult {
  const code = domainCode(err);
  const message = err instanceof Error ? err.message : String(err);
  const text = code
    ? `${code}: ${message}`
    : `Unexpected error: ${sentence(message)} This is a bug in Waymark or its database; the server's stderr log has details.`;
  if (!code) log("error", "waymark mcp", err instanceof Error ? (err.stack ?? message) : message);
  return {
    content: [{ type: "text", text: cutText(text, MAX_ERROR_CHARS) }],
    isError: true,
  };
}

/** "a, b, c" with at most `max` names, ", ..." after. */
export function nameList(names: readonly string[], max = 15): string {
  return names.length > max ? `${names.slice(0, max).join(", ")}, ...` : names.join(", ");
}
