// A small MCP Apps host for trying the views by hand and for the browser test: a page on 127.0.0.1 built on
// the package's host side (AppBridge, host/page.js) and a real MCP client (Streamable HTTP) connected to a
// Waymark server, reached by the page through POST /rpc (tools/list, tools/call, resources/read only).
// The client announces the MCP Apps extension, so the server offers its views. The token, if any, stays here.

import type { IncomingMessage, Server, ServerResponse } from "node:http";
import { fileURLToPath } from "node:url";
import { RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/server";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { listen, serveOn } from "../listen.js";
import { bundleScript } from "./html.js";

const PAGE = fileURLToPath(new URL("./host/page.js", import.meta.url));

export interface AppsHostOptions {
  /** The Waymark server's MCP endpoint, e.g. http://127.0.0.1:4000/mcp. */
  url: string;
  token?: string;
  /** Port to serve the page on (127.0.0.1); 0 picks a free one. */
  port?: number;
}

export interface AppsHost {
  /** The page's address. */
  url: string;
  close(): Promise<void>;
}

const html = (script: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Waymark MCP Apps host</title>
<style>body{font:14px system-ui,sans-serif;margin:16px}textarea{width:100%;max-width:640px;font-family:monospace}
pre{white-space:pre-wrap;max-width:800px;background:#f4f4f4;padding:8px}iframe{border:1px solid #999;display:block}
[data-theme=dark] body{background:#111;color:#eee}[data-theme=dark] pre{background:#222}</style></head>
<body><h1>MCP Apps test host</h1>
<p><label>Tool <select id="tool"></select></label>
<label>Theme <select id="theme"><option>light</option><option>dark</option></select></label>
<label>Styles <select id="styles"><option>none</option><option>sample</option></select></label>
<label>Width <select id="width"><option>400</option><option selected>800</option></select></label>
<button id="call" type="button">Call</button> <span id="status" role="status">connecting…</span></p>
<p><textarea id="args" rows="3" aria-label="Arguments (JSON)">{}</textarea></p>
<div id="frame"></div><h2>Text answer</h2><pre id="answer"></pre>
<script>${script}</script></body></html>`;

async function readBody(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > 1_000_000) throw new Error("The request body is larger than 1 MB.");
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/** Connects to the server and serves the host page; close() ends both. */
export async function startAppsHost(options: AppsHostOptions): Promise<AppsHost> {
  const client = new Client(
    { name: "waymark-apps-host", version: "0.1.0" },
    { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } } },
  );
  const headers: Record<string, string> = options.token ? { authorization: `Bearer ${options.token}` } : {};
  await client.connect(new StreamableHTTPClientTransport(new URL(options.url), { requestInit: { headers } }));
  const page = html(await bundleScript(PAGE));
  const server: Server = await listen("127.0.0.1", options.port ?? 0);
  const address = server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const origin = `http://127.0.0.1:${port}`;

  serveOn(server, (req: IncomingMessage, res: ServerResponse) => {
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify(body));
    };
    if (req.method === "GET" && (req.url === "/" || req.url?.startsWith("/?"))) {
      res.writeHead(200, { "content-type": "text/html; charset=utf-8", "cache-control": "no-store" });
      res.end(page);
      return;
    }
    if (req.method !== "POST" || req.url !== "/rpc") return send(404, { error: "Only GET / and POST /rpc." });
    // Only this page may call: another site open in the same browser may not drive the server.
    if (req.headers.origin !== origin) return send(403, { error: `Origin must be ${origin}.` });
    readBody(req)
      .then(async (body) => {
        const { method, params } = body as { method: string; params: never };
        if (method === "tools/list") return client.listTools(params);
        if (method === "tools/call") return client.callTool(params);
        if (method === "resources/read") return client.readResource(params);
        throw new Error(`The host forwards tools/list, tools/call and resources/read; not ${method}.`);
      })
      .then(
        (result) => send(200, { result }),
        (err: unknown) => send(400, { error: err instanceof Error ? err.message : String(err) }),
      );
  });
  return {
    url: `${origin}/`,
    async close() {
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await client.close();
    },
  };
}
