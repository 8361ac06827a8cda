// Links to the run inspector: when the HTTP server serves it, every answer about a run (a tool whose arguments
// name a workflow and key) carries the inspector's URL of that run, and of the entry for get_step, in its
// structured content (`inspector`) and as a last text line, so a client can hand the user a link.
//
// The URL is the one the inspector's router opens (static/app.js): <base>#/run/<workflow>/<key>?entry=<id>.

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

/** The inspector's page for a run (and an entry of it), under `base` (the server's root, ending in "/"). */
export function inspectorUrl(base: string, workflow: string, key: string, entry?: number): string {
  const page = `${base}#/run/${encodeURIComponent(workflow)}/${encodeURIComponent(key)}`;
  return entry === undefined ? page : `${page}?entry=${entry}`;
}

/**
 * The inspector's root for links: `publicUrl` when given (ending in "/"), else the endpoint's root with a
 * wildcard bind (0.0.0.0, ::) shown as 127.0.0.1, an address a browser on this machine opens.
 */
export function inspectorRoot(endpoint: string, publicUrl?: string | null): string {
  if (publicUrl) return publicUrl.endsWith("/") ? publicUrl : `${publicUrl}/`;
  const url = new URL(endpoint);
  if (url.hostname === "0.0.0.0" || url.hostname === "[::]") url.hostname = "127.0.0.1";
  return `${url.origin}/`;
}

/** The output field the run tools gain when links are on. */
export const inspectorShape = {
  inspector: z
    .object({
      run: z.string().describe("The run's page in the inspector (open it in a browser)."),
      entry: z.string().optional().describe("The entry's page in the inspector (get_step)."),
      entryTemplate: z
        .string()
        .optional()
        .describe("An entry's page in the inspector: put the entry's id for {id} (get_history)."),
    })
    .optional()
    .describe("Links to the run inspector served by this HTTP server; absent without it (stdio)."),
};

/** True when a tool's arguments address one run (workflow and key), so its answers get links. */
export function addressesRun(input: Record<string, unknown>): boolean {
  return "workflow" in input && "key" in input;
}

/** A successful answer with the inspector's links added; others as they are. */
export function withLinks(
  result: CallToolResult,
  tool: string,
  args: Record<string, unknown>,
  base: string,
): CallToolResult {
  const { workflow, key } = args;
  if (result.isError || typeof workflow !== "string" || typeof key !== "string") return result;
  const structured = (result.structuredContent ?? {}) as Record<string, unknown>;
  const links: { run: string; entry?: string; entryTemplate?: string } = {
    run: inspectorUrl(base, workflow, key),
  };
  if (tool === "get_step" && typeof structured.id === "number")
    links.entry = inspectorUrl(base, workflow, key, structured.id);
  if (tool === "get_history") links.entryTemplate = `${links.run}?entry={id}`;
  const line = `Inspector: ${links.entry ?? links.run}`;
  return {
    ...result,
    content: [...result.content, { type: "text", text: line }],
    ...(result.structuredContent ? { structuredContent: { ...structured, inspector: links } } : {}),
  };
}
