// resources/subscribe and unsubscribe for one session: notifications/resources/updated on every change of
// a watched run, through the engine's change feed (shared by all sessions, indexed by run).
//
// IMPORTANT: a session holds at most `max` subscriptions, each to a URI (at most LIMITS.uri characters:
// the session guard refuses longer ones) that names a resource which exists (waymark://workflows, a run, its history or state, one of its
// entries); anything else is refused with an error that says why, and holds nothing.

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import {
  ErrorCode,
  McpError,
  SubscribeRequestSchema,
  UnsubscribeRequestSchema,
} from "@modelcontextprotocol/sdk/types.js";
import { changeFeed } from "./changes.js";
import type { McpContext } from "./context.js";
import { domainCode } from "./errors.js";
import { quote } from "./format.js";
import { count, DEFAULT_MAX_SUBSCRIPTIONS } from "./limits.js";
import { findEntry } from "./tools/get-step.js";
import { parseRunUri, WORKFLOWS_URI } from "./uris.js";

/** The MCP error code for a resource that does not exist. */
export const RESOURCE_NOT_FOUND = -32002;

const SHAPES =
  "waymark://workflows, or waymark://runs/{workflow}/{key} with /history, /state or /steps/{id} after it (names percent-encoded)";

/** Refuses a URI that names nothing of ours, or a run or entry that does not exist. */
async function checkUri(ctx: McpContext, uri: string): Promise<{ workflow: string; key: string } | null> {
  if (uri === WORKFLOWS_URI) return null;
  const addr = parseRunUri(uri);
  if (!addr) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Cannot subscribe to ${quote(uri, 200)}: it is not a resource of this server. Resources here are ${SHAPES}.`,
    );
  }
  const notFound = (err: unknown) => {
    if (!domainCode(err)) throw err;
    return new McpError(
      RESOURCE_NOT_FOUND,
      `Cannot subscribe to ${quote(uri, 200)}: ${(err as Error).message} Subscribe once it exists.`,
    );
  };
  const row = await ctx.run(addr.workflow, addr.key).catch((err: unknown) => {
    throw notFound(err);
  });
  if (addr.part === "step") {
    await findEntry(ctx.engine, row.id, addr.step!).catch((err: unknown) => {
      throw notFound(err);
    });
  }
  return { workflow: addr.workflow, key: addr.key };
}

/** Registers resources/subscribe and unsubscribe on `mcp`; at most `max` subscriptions at once. */
export function registerSubscriptions(
  mcp: McpServer,
  ctx: McpContext,
  max = DEFAULT_MAX_SUBSCRIPTIONS,
): void {
  const feed = changeFeed(ctx.engine);
  // Each URI's stop function, once watching; a pending subscribe holds its place (and counts).
  const subscriptions = new Map<string, Promise<() => void>>();
  const notify = (uri: string) => () => {
    if (mcp.isConnected()) void mcp.server.sendResourceUpdated({ uri }).catch(() => {});
  };
  mcp.server.setRequestHandler(SubscribeRequestSchema, async (request) => {
    const uri = request.params.uri;
    if (subscriptions.has(uri)) {
      await subscriptions.get(uri);
      return {};
    }
    if (subscriptions.size >= max) {
      throw new McpError(
        ErrorCode.InvalidRequest,
        `This session already holds ${count(max)} subscriptions, the most it may. Unsubscribe (resources/unsubscribe) from resources you no longer follow, then subscribe again.`,
      );
    }
    const off = checkUri(ctx, uri).then((run) =>
      run ? feed.watchRun(run.workflow, run.key, notify(uri)) : feed.watchAll(notify(uri)),
    );
    subscriptions.set(uri, off);
    try {
      await off;
    } catch (err) {
      if (subscriptions.get(uri) === off) subscriptions.delete(uri);
      throw err;
    }
    return {};
  });
  mcp.server.setRequestHandler(UnsubscribeRequestSchema, async (request) => {
    const off = subscriptions.get(request.params.uri);
    subscriptions.delete(request.params.uri);
    if (off) (await off.catch(() => () => {}))();
    return {};
  });
  const previous = mcp.server.onclose;
  mcp.server.onclose = () => {
    previous?.();
    for (const off of subscriptions.values()) void off.then((f) => f()).catch(() => {});
    subscriptions.clear();
  };
}
