// Inspector test plumbing: an HTTP server with the inspector mounted, raw requests, and an SSE reader.

import http from "node:http";
import type { Engine } from "../../src/engine/engine.js";
import { createInspector, type InspectorOptions } from "../../src/inspector/index.js";
import { type HttpHandle, type HttpOptions, serveHttp } from "../../src/mcp/http.js";
import { createMcpServer } from "../../src/mcp/server.js";
import type { Closer } from "../mcp/helpers.js";

/** Serves MCP with the inspector mounted on port 0; `base` is http://127.0.0.1:port (no trailing slash). */
export async function serveInspector(
  closer: Closer,
  engine: Engine,
  options: { http?: HttpOptions; inspector?: InspectorOptions } = {},
): Promise<HttpHandle & { base: string }> {
  const handle = await serveHttp(() => createMcpServer(engine), {
    port: 0,
    ...options.http,
    mount: createInspector(engine, options.inspector),
  });
  closer.add(() => handle.close());
  return { ...handle, base: handle.url.replace(/\/mcp$/, "") };
}

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON). */
  json: any;
}

/** A raw request, so tests can set any Host, Origin, cookie or body. A JSON `body` is sent as such. */
export function request(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: unknown; raw?: string } = {},
): Promise<Answer> {
  const u = new URL(url);
  const payload = init.raw ?? (init.body === undefined ? undefined : JSON.stringify(init.body));
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        method: init.method ?? (payload === undefined ? "GET" : "POST"),
        headers: {
          ...(payload !== undefined && init.raw === undefined ? { "content-type": "application/json" } : {}),
          ...init.headers,
        },
      },
      (res) => {
        let text = "";
        res.setEncoding("utf8");
        res.on("data", (d) => (text += d));
        res.on("end", () => {
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
        });
      },
    );
    req.on("error", reject);
    req.end(payload);
  });
}

export interface SseEvent {
  event: string;
  data: any;
}

/** Opens /api/events and collects its events; `next(pred)` resolves with the first matching one. */
export async function openEvents(closer: Closer, url: string, headers: Record<string, string> = {}) {
  const events: SseEvent[] = [];
  const waiters: Array<{ pred: (e: SseEvent) => boolean; resolve: (e: SseEvent) => void }> = [];
  const u = new URL(url);
  const res = await new Promise<http.IncomingMessage>((resolve, reject) => {
    const req = http.get(
      { host: u.hostname, port: u.port, path: `${u.pathname}${u.search}`, headers },
      resolve,
    );
    req.on("error", reject);
    closer.add(() => req.destroy());
  });
  let buffer = "";
  res.setEncoding("utf8");
  res.on("data", (chunk: string) => {
    buffer += chunk;
    let end = buffer.indexOf("\n\n");
    while (end >= 0) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      end = buffer.indexOf("\n\n");
      const event = /^event: (.*)$/m.exec(block)?.[1];
      const data = /^data: (.*)$/m.exec(block)?.[1];
      if (!event) continue;
      const e = { event, data: data === undefined ? null : JSON.parse(data) };
      events.push(e);
      for (const w of [...waiters]) {
        if (w.pred(e)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.resolve(e);
        }
      }
    }
  });
  const next = (pred: (e: SseEvent) => boolean, what = "an event"): Promise<SseEvent> => {
    const seen = events.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`No ${what}; got ${JSON.stringify(events.map((e) => e.event))}`)),
        20_000,
      );
      waiters.push({
        pred,
        resolve: (e) => {
          clearTimeout(timer);
          resolve(e);
        },
      });
    });
  };
  return { status: res.statusCode ?? 0, headers: res.headers, events, next };
}
