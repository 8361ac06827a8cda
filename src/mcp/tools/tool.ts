// The shape of one tool: schemas the model reads, annotations, and a handler over the engine.

import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import type {
  CallToolResult,
  ServerNotification,
  ServerRequest,
  ToolAnnotations,
} from "@modelcontextprotocol/sdk/types.js";
import type { z } from "zod";
import type { McpContext } from "../context.js";

export type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export interface ToolDef<I extends z.ZodRawShape = z.ZodRawShape, O extends z.ZodRawShape = z.ZodRawShape> {
  name: string;
  title: string;
  /** Written for the model: what it is for, when to use it, what comes back. */
  description: string;
  input: I;
  output: O;
  annotations: ToolAnnotations;
  /** Writes to the database: hidden by --read-only. */
  write: boolean;
  /** Runs workflow code (start_run, call_action): hidden where the engine has none (attach mode). */
  needsCode?: boolean;
  /** Its MCP Apps view (src/mcp/apps): the ui:// resource a host renders with the answer, and who may call it. */
  view?: { resourceUri: string; visibility?: Array<"model" | "app"> };
  handler(args: z.output<z.ZodObject<I>>, ctx: McpContext, extra: Extra): Promise<CallToolResult>;
}

/** Declares a tool (identity, for typing). */
export function defineTool<I extends z.ZodRawShape, O extends z.ZodRawShape>(
  def: ToolDef<I, O>,
): ToolDef<I, O> {
  return def;
}

/** Annotations of a tool that only reads. */
export const READ_ONLY: ToolAnnotations = {
  readOnlyHint: true,
  destructiveHint: false,
  idempotentHint: true,
  openWorldHint: false,
};
