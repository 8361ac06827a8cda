// createMcpServer(engine, options): one MCP server (one session) over an engine, with no transport in it.
// Transports (stdio.ts, http.ts) only connect what this returns; every session shares the engine.

import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { SubscribeRequestSchema, UnsubscribeRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import type { Engine } from "../engine/engine.js";
import { changeFeed } from "./changes.js";
import { McpContext, type McpServerOptions } from "./context.js";
import { errorResult } from "./errors.js";
import { SessionGuard } from "./guard.js";
import { registerPrompts } from "./prompts.js";
import { registerResources } from "./resources.js";
import { TOOLS } from "./tools/index.js";
import type { ToolDef } from "./tools/tool.js";
import { parseRunUri, WORKFLOWS_URI } from "./uris.js";

export type { McpServerOptions } from "./context.js";

const INSTRUCTIONS = `Waymark runs durable workflows; this server shows their whole history and lets you act on runs.
Runs are addressed by workflow name + key. Typical paths:
- What failed, and what now? diagnose_run → its next actions in order (person steps first, replay_run with dryRun first). What fails most? list_failures.
- Who waits for a decision? list_runs {status:["waiting"]} → get_run (shows the queue's message schema) → send_message with an idempotencyKey → wait_for_run.
Resources waymark://runs/{workflow}/{key} (+ /history, /state, /steps/{id}) hold values whole; subscribe to follow a run.`;

const READ_ONLY_INSTRUCTIONS = `Waymark runs durable workflows; this server is read-only: it shows their whole history but cannot change runs (no sending messages, replaying, starting or cancelling).
Runs are addressed by workflow name + key. Typical paths:
- What failed, and what now? diagnose_run → explain it; its person steps say what the user must do (changes that need a writable server included). What fails most? list_failures.
- Who waits for a decision? list_runs {status:["waiting"]} → get_run (shows the queue's message schema) → tell the user what is asked; answering needs a writable server.
Resources waymark://runs/{workflow}/{key} (+ /history, /state, /steps/{id}) hold values whole; subscribe to follow a run.`;

function registerTool(mcp: McpServer, ctx: McpContext, tool: ToolDef): void {
  mcp.registerTool(
    tool.name,
    {
      title: tool.title,
      description: tool.description,
      inputSchema: tool.input,
      outputSchema: tool.output,
      annotations: tool.annotations,
    },
    (async (args: Record<string, unknown>, extra: Parameters<ToolDef["handler"]>[2]) => {
      try {
        return await tool.handler(args as never, ctx, extra);
      } catch (err) {
        return errorResult(err);
      }
    }) as never,
  );
}

/** resources/subscribe and unsubscribe: notifications/resources/updated on every change of a watched run. */
function registerSubscriptions(mcp: McpServer, ctx: McpContext): void {
  const feed = changeFeed(ctx.engine);
  const subscriptions = new Map<string, Promise<() => void>>();
  const notify = (uri: string) => () => {
    if (mcp.isConnected()) void mcp.server.sendResourceUpdated({ uri }).catch(() => {});
  };
  mcp.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const uri = request.params.uri;
    if (subscriptions.has(uri)) return {};
    let off: Promise<() => void>;
    if (uri === WORKFLOWS_URI) off = feed.watchAll(notify(uri));
    else {
      const addr = parseRunUri(uri);
      // A URI that names nothing of ours is accepted (as the protocol expects) and simply never changes.
      off = addr ? feed.watchRun(addr.workflow, addr.key, notify(uri)) : Promise.resolve(() => {});
    }
    subscriptions.set(uri, off);
    await off;
    return {};
  });
  mcp.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    const off = subscriptions.get(request.params.uri);
    subscriptions.delete(request.params.uri);
    if (off) (await off)();
    return {};
  });
  const previous = mcp.server.onclose;
  mcp.server.onclose = () => {
    previous?.();
    for (const off of subscriptions.values()) void off.then((f) => f());
    subscriptions.clear();
  };
}

/** An McpServer whose every session, on any transport, passes through the guard (see guard.ts). */
class GuardedMcpServer extends McpServer {
  override connect(transport: Transport): Promise<void> {
    return super.connect(new SessionGuard(transport));
  }
}

/** A new MCP server over `engine`: tools (write tools hidden when readOnly), resources, prompts. */
export function createMcpServer(engine: Engine, options: McpServerOptions = {}): McpServer {
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
  const tools = TOOLS.filter((t) => !(t.write && options.readOnly));
  const ctx = new McpContext(engine, options, mcp, new Set(tools.map((t) => t.name)));
  for (const tool of tools) registerTool(mcp, ctx, tool as unknown as ToolDef);
  registerResources(mcp, ctx);
  registerPrompts(mcp, ctx);
  registerSubscriptions(mcp, ctx);
  return mcp;
}
