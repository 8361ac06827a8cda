// src/mcp/apps/ui-meta.ts keeps @modelcontextprotocol/ext-apps out of a starting server (issue 21): its names
// and helpers must say what the package's own do. Compared here on one McpServer each.

import * as extApps from "@modelcontextprotocol/ext-apps/server";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { expect, test } from "vitest";
import * as ours from "../../../src/mcp/apps/ui-meta.js";

test("the names are the package's", () => {
  expect(ours.RESOURCE_MIME_TYPE).toBe(extApps.RESOURCE_MIME_TYPE);
  expect(ours.RESOURCE_URI_META_KEY).toBe(extApps.RESOURCE_URI_META_KEY);
  expect(ours.EXTENSION_ID).toBe(extApps.EXTENSION_ID);
});

test("getUiCapability reads what the package's reads", () => {
  const cases = [
    undefined,
    {},
    { extensions: {} },
    { extensions: { [extApps.EXTENSION_ID]: {} } },
    { extensions: { [extApps.EXTENSION_ID]: { mimeTypes: [extApps.RESOURCE_MIME_TYPE] } } },
    { extensions: { other: { mimeTypes: ["text/html"] } } },
  ];
  for (const c of cases) expect(ours.getUiCapability(c)).toEqual(extApps.getUiCapability(c as never));
});

test("registerAppTool and registerAppResource register what the package's do", () => {
  const metas = [
    { ui: { resourceUri: "ui://waymark/run", visibility: ["app"] } },
    { [extApps.RESOURCE_URI_META_KEY]: "ui://waymark/run" },
    { ui: { resourceUri: "ui://a" }, [extApps.RESOURCE_URI_META_KEY]: "ui://b" },
    { ui: {} },
  ];
  const cb = async () => ({ content: [] });
  for (const _meta of metas) {
    const a = new McpServer({ name: "a", version: "1" });
    const b = new McpServer({ name: "b", version: "1" });
    const theirs = extApps.registerAppTool(a, "t", { description: "d", _meta } as never, cb as never);
    const mine = ours.registerAppTool(b, "t", { description: "d", _meta } as never, cb as never);
    expect(mine._meta).toEqual(theirs._meta);
    expect(mine.description).toBe(theirs.description);
  }
  const a = new McpServer({ name: "a", version: "1" });
  const b = new McpServer({ name: "b", version: "1" });
  const read = async () => ({ contents: [] });
  const theirs = extApps.registerAppResource(a, "n", "ui://x", { description: "d" }, read) as unknown;
  ours.registerAppResource(b, "n", "ui://x", { description: "d" }, read);
  const reg = (s: McpServer) =>
    (s as unknown as { _registeredResources: Record<string, { metadata: unknown; name: string }> })
      ._registeredResources["ui://x"];
  expect(reg(b)?.metadata).toEqual(reg(a)?.metadata);
  expect(reg(b)?.name).toBe(reg(a)?.name);
  void theirs;
});
