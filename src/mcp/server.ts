// createMcpServer(engine, options): one MCP server (one session) over an engine, with no transport in it.
// Transports (stdio.ts, http.ts) only connect what this returns; every session shares the engine.

import { McpServer, type RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import type { WaymarkEngine } from "../engine/api.js";
import { offerViews } from "./apps/register.js";
import { registerAppTool } from "./apps/ui-meta.js";
import { AuditTap } from "./audit-tap.js";
import { McpContext, type McpServerOptions } from "./context.js";
import { errorResult } from "./errors.js";
import { SessionGuard } from "./guard.js";
import { addressesRun, inspectorShape, withLinks } from "./links.js";
import { registerPrompts } from "./prompts.js";
import { registerResources } from "./resources.js";
import { registerSubscriptions } from "./subscriptions.js";
import { TOOLS } from "./tools/index.js";
import type { ToolDef } from "./tools/tool.js";

export type { McpServerOptions } from "./context.js";

const INSTRUCTIONS = `Waymark runs durable workflows; this server shows their whole history and lets you act on runs.
Runs are addressed by workflow name + key. Typical paths:
- What failed, and what now? diagnose_run → its next actions in order (person steps first, replay_run with dryRun first). What fails most? list_failures.
- Who waits for a decision? review_approvals (every queue wait with its message schema; a form in hosts with MCP Apps), or list_runs {status:["waiting"]} → get_run → send_message with an idempotencyKey → wait_for_run.
Resources waymark://runs/{workflow}/{key} (+ /history, /state, /steps/{id}) hold values whole; subscribe to follow a run.`;

const READ_ONLY_INSTRUCTIONS = `Waymark runs durable workflows; this server is read-only: it shows their whole history but cannot change runs (no sending messages, replaying, starting or cancelling).
Runs are addressed by workflow name + key. Typical paths:
- What failed, and what now? diagnose_run → explain it; its person steps say what the user must do (changes that need a writable server included). What fails most? list_failures.
- Who waits for a decision? review_approvals (every queue wait with its message schema), or list_runs {status:["waiting"]} → get_run → tell the user what is asked; answering needs a writable server.
Resources waymark://runs/{workflow}/{key} (+ /history, /state, /steps/{id}) hold values whole; subscribe to follow a run.`;

/** Tools whose arguments are checked strictly (an unknown key is refused rather than dropped). */
const STRICT_TOOLS = new Set(["replay_runs", "cancel_runs", "compare_runs", "list_audit"]);
/** Registers one tool; a tool with a view is registered through the MCP Apps helper, which adds its _meta.ui. */
function registerTool(mcp: McpServer, ctx: McpContext, tool: ToolDef): RegisteredTool {
  // With the HTTP inspector, the answers about one run link to its page there (see links.ts).
  const base = ctx.options.inspectorUrl;
  const links = base !== undefined && addressesRun(tool.input);
  const config = {
    title: tool.title,
    description: tool.description,
    // Strict where a dropped argument changes what is done: an unknown (misspelt) key is refused, naming it.
    inputSchema: STRICT_TOOLS.has(tool.name) ? z.strictObject(tool.input) : tool.input,
    outputSchema: links ? { ...tool.output, ...inspectorShape } : tool.output,
    annotations: tool.annotations,
  };
  const register = (cb: never) =>
    tool.view
      ? registerAppTool(mcp, tool.name, { ...config, _meta: { ui: tool.view } }, cb)
      : mcp.registerTool(tool.name, config, cb);
  return register((async (args: Record<string, unknown>, extra: Parameters<ToolDef["handler"]>[2]) => {
    const started = performance.now();
    let result: CallToolResult;
    try {
      result = await tool.handler(args as never, ctx, extra);
      if (links) result = withLinks(result, tool.name, args, base);
    } catch (err) {
      result = errorResult(err);
    }
    ctx.engine.metrics.mcpCall(tool.name, !result.isError, (performance.now() - started) / 1000);
    return result;
  }) as never);
}

/**
 * An McpServer whose every session, on any transport, passes through the guard (see guard.ts) and, under
 * it, the audit of the write tools' calls (see audit-tap.ts).
 */
class GuardedMcpServer extends McpServer {
  audit: { engine: WaymarkEngine; writeTools: ReadonlySet<string> } | null = null;

  override connect(transport: Transport): Promise<void> {
    const tapped = this.audit
      ? new AuditTap(transport, { ...this.audit, client: () => this.server.getClientVersion() })
      : transport;
    return super.connect(new SessionGuard(tapped));
  }
}

/**
 * A new MCP server over `engine`: tools (write tools hidden when readOnly, the ones that run workflow code
 * hidden when the engine has none), resources, prompts.
 */
export function createMcpServer(engine: WaymarkEngine, options: McpServerOptions = {}): McpServer {
  const mcp = new GuardedMcpServer(
    { name: options.name ?? "waymark", version: options.version ?? "0.1.0" },
    {
      capabilities: {
        tools: { listChanged: false },
        resources: { subscribe: true, listChanged: false },
        prompts: { listChanged: false },
        completions: {},
        logging: {},
      },
      instructions: options.readOnly ? READ_ONLY_INSTRUCTIONS : INSTRUCTIONS,
    },
  );
  // Beside an application (no workflow code here), start_run and call_action could only fail: not listed.
  const hasCode = engine.registered().length > 0;
  const tools = TOOLS.filter((t: ToolDef) => !(t.write && options.readOnly) && !(t.needsCode && !hasCode));
  const ctx = new McpContext(engine, options, mcp, new Set(tools.map((t) => t.name)));
  mcp.audit = { engine, writeTools: new Set(tools.filter((t: ToolDef) => t.write).map((t) => t.name)) };
  const viewTools: RegisteredTool[] = [];
  for (const tool of tools) {
    const registered = registerTool(mcp, ctx, tool as unknown as ToolDef);
    if ((tool as unknown as ToolDef).view) viewTools.push(registered);
  }
  registerResources(mcp, ctx);
  registerPrompts(mcp, ctx);
  registerSubscriptions(mcp, ctx, options.maxSubscriptions);
  offerViews(mcp, viewTools, (tool) => registerTool(mcp, ctx, tool));
  return mcp;
}
