// HTTP plumbing for MCP tests: an SDK client over Streamable HTTP, and raw requests for what it would not send.

import http from "node:http";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { Closer } from "./helpers.js";

/** An SDK client connected to `url` (closed by `closer`). */
export async function httpClient(closer: Closer, url: string, token?: string) {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
  });
  const client = new Client({ name: "http-test", version: "1.0.0" });
  await client.connect(transport);
  closer.add(() => client.close());
  return { client, transport };
}

/** A raw request, so tests can set Host, Origin and bodies the SDK client would not send. */
export function raw(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string; sessionId: string; headers: http.IncomingHttpHeaders }> {
  const u = new URL(url);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: u.pathname,
        method: init.method ?? "POST",
        headers: {
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
          ...init.headers,
        },
      },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d));
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body,
            sessionId: String(res.headers["mcp-session-id"] ?? ""),
            headers: res.headers,
          }),
        );
      },
    );
    req.on("error", reject);
    req.end(init.body ?? "");
  });
}

/** An initialize request as a client first sends it. */
export const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});
