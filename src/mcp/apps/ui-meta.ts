// The few MCP Apps names and helpers the server needs when it starts, written here so that starting a server
// does not load @modelcontextprotocol/ext-apps (a bundle of its App and bridge classes). They follow that
// package's server helpers; test/mcp/apps/ui-meta.test.ts checks them against it.

import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";

/** The MIME type of an MCP Apps view resource. */
export const RESOURCE_MIME_TYPE = "text/html;profile=mcp-app";
/** The older, flat _meta key naming a tool's view resource. */
export const RESOURCE_URI_META_KEY = "ui/resourceUri";
/** The key of the UI extension in a client's capabilities. */
export const EXTENSION_ID = "io.modelcontextprotocol/ui";

/** What a client announces under the UI extension. */
export interface UiCapability {
  mimeTypes?: string[];
}

/** The client's UI extension capability, or undefined when it announces none. */
export function getUiCapability(
  capabilities: { extensions?: Record<string, unknown> } | undefined | null,
): UiCapability | undefined {
  return capabilities?.extensions?.[EXTENSION_ID] as UiCapability | undefined;
}

/** A tool's config as McpServer.registerTool takes it, with the _meta naming its view. */
interface ToolConfig {
  _meta: { ui?: { resourceUri?: string }; [key: string]: unknown };
  [key: string]: unknown;
}

/**
 * Registers a tool with a view: its _meta names the view both ways (`ui.resourceUri` and the flat
 * RESOURCE_URI_META_KEY), whichever of the two it was given.
 */
export function registerAppTool(mcp: McpServer, name: string, config: ToolConfig, cb: never): RegisteredTool {
  const meta = config._meta;
  const uri = meta.ui?.resourceUri;
  const flat = meta[RESOURCE_URI_META_KEY] as string | undefined;
  let _meta: Record<string, unknown> = meta;
  if (uri && !flat) _meta = { ...meta, [RESOURCE_URI_META_KEY]: uri };
  else if (flat && !uri) _meta = { ...meta, ui: { ...meta.ui, resourceUri: flat } };
  return mcp.registerTool(name, { ...config, _meta } as never, cb);
}

/** Registers a view resource (its MIME type RESOURCE_MIME_TYPE unless the metadata says otherwise). */
export function registerAppResource(
  mcp: McpServer,
  name: string,
  uri: string,
  metadata: Parameters<McpServer["registerResource"]>[2],
  read: Parameters<McpServer["registerResource"]>[3] & ((...args: never[]) => unknown),
): void {
  mcp.registerResource(name, uri, { mimeType: RESOURCE_MIME_TYPE, ...metadata }, read as never);
}
