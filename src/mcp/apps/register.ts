// MCP Apps (SEP-1865): for a client that announces the UI extension, the views' ui:// resources and the
// app-only view_run tool. get_run, diagnose_run and review_approvals name their view in _meta.ui
// (tools/tool.ts `view`); a client without the extension sees the same tools, resources and answers as before.

import {
  getUiCapability,
  RESOURCE_MIME_TYPE,
  registerAppResource,
} from "@modelcontextprotocol/ext-apps/server";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ToolDef } from "../tools/tool.js";
import { viewHtml } from "./html.js";
import { VIEWS, type ViewUri } from "./uris.js";
import { viewRun } from "./view-run.js";

/** True when the client's capabilities say it renders MCP Apps views (text/html;profile=mcp-app). */
export function rendersViews(capabilities: Parameters<typeof getUiCapability>[0]): boolean {
  return getUiCapability(capabilities)?.mimeTypes?.includes(RESOURCE_MIME_TYPE) ?? false;
}

/** Registers the views' resources: each a self-contained page that may load and connect to nothing. */
function registerViewResources(mcp: McpServer): void {
  for (const [uri, { view, name }] of Object.entries(VIEWS) as Array<[ViewUri, (typeof VIEWS)[ViewUri]]>) {
    const ui = { csp: { connectDomains: [], resourceDomains: [] }, prefersBorder: true };
    registerAppResource(
      mcp,
      name,
      uri,
      { description: `${name}: an MCP Apps page drawn by the host with the tool's answer.`, _meta: { ui } },
      async () => ({
        contents: [{ uri, mimeType: RESOURCE_MIME_TYPE, text: await viewHtml(view), _meta: { ui } }],
      }),
    );
  }
}

/** Once the client has said what it is: the views and view_run for a client that renders them. */
export function offerViews(mcp: McpServer, register: (tool: ToolDef) => void): void {
  mcp.server.oninitialized = () => {
    if (!rendersViews(mcp.server.getClientCapabilities())) return;
    registerViewResources(mcp);
    register(viewRun as unknown as ToolDef);
  };
}
