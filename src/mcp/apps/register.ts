// MCP Apps (SEP-1865): for a client that announces the UI extension, the views' ui:// resources and the
// app-only view_run tool. get_run, diagnose_run and review_approvals name their view in _meta.ui
// (tools/tool.ts `view`) to such a client only; a client without the extension sees the same tools (no _meta.ui),
// resources and answers as before. Support is what the package's own check says: the extension's key with
// mimeTypes including text/html;profile=mcp-app (getUiCapability + RESOURCE_MIME_TYPE, in ui-meta.ts so that
// a starting server does not load the package).

import type { McpServer, RegisteredTool } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { ToolDef } from "../tools/tool.js";
import { viewHtml } from "./html.js";
import {
  getUiCapability,
  RESOURCE_MIME_TYPE,
  RESOURCE_URI_META_KEY,
  registerAppResource,
} from "./ui-meta.js";
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

/**
 * Once the client has said what it is: the views and view_run for a client that renders them; for any other
 * client, the tools that name a view (`viewTools`) lose their _meta.ui, which would point at a resource this
 * client cannot read. (Set on the registered tools before the client lists them; no list_changed is sent.)
 */
export function offerViews(
  mcp: McpServer,
  viewTools: RegisteredTool[],
  register: (tool: ToolDef) => void,
): void {
  mcp.server.oninitialized = () => {
    if (!rendersViews(mcp.server.getClientCapabilities())) {
      for (const tool of viewTools) {
        const { ui: _ui, [RESOURCE_URI_META_KEY]: _uri, ...rest } = tool._meta ?? {};
        tool._meta = Object.keys(rest).length ? rest : undefined;
      }
      return;
    }
    registerViewResources(mcp);
    register(viewRun as unknown as ToolDef);
  };
}
