// The Streamable HTTP transport on node:http: stateful sessions (one transport and one server each),
// GET for the server's stream, DELETE to end a session. Guards: Host and Origin checks against DNS
// rebinding, an optional bearer token (required beyond loopback), and a body size limit.

import { randomUUID, timingSafeEqual } from "node:crypto";
import type http from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.js";
import { count, DEFAULT_HTTP_PORT, DEFAULT_MAX_SESSIONS, DEFAULT_SESSION_IDLE_MS } from "./limits.js";
import { listen, serveOn } from "./listen.js";

export interface HttpOptions {
  /** Address to bind (default 127.0.0.1). */
  host?: string;
  /** Port (default 3920; 0 picks a free one). */
  port?: number;
  /** Bearer token clients must send; required when `host` is not a loopback address. */
  token?: string;
  /** Largest request body in bytes (default 1 MiB). */
  maxBodyBytes?: number;
  /** More host names clients may use in Host and Origin (beside loopback names and the bound address). */
  allowedHosts?: string[];
  /** Path of the MCP endpoint (default "/mcp"). */
  path?: string;
  /**
   * A session with no request in progress and no open GET stream for this long is closed (default 30
   * minutes), so clients that vanish without DELETE do not hold a server and its subscriptions forever.
   * A client that comes back after that gets 404 and initializes a new session, as the spec asks.
   */
  sessionIdleMs?: number;
  /**
   * Open sessions kept at once (default DEFAULT_MAX_SESSIONS): past it, an initialize answers 503 with a
   * JSON-RPC error saying so, and nothing is kept for it. Each session holds a server and its subscriptions.
   */
  maxSessions?: number;
  /**
   * Serves every other path (the inspector), after the Host and Origin checks. It gets the bearer token
   * to enforce itself, since a browser page cannot send an Authorization header.
   */
  mount?: HttpMount;
  /**
   * Serves GET /metrics (Prometheus text, e.g. `() => engine.metrics.scrape()`), behind the same Host and
   * Origin checks and the same bearer token as /mcp.
   */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** A server already bound with listen() (host and port are then its own); otherwise one is bound here. */
  server?: http.Server;
}

/** A handler beside the MCP endpoint; `guard` carries the server's token and body limit; `close` runs when the server stops. */
export type HttpMount = ((
  req: IncomingMessage,
  res: ServerResponse,
  guard: { token: string | undefined; maxBodyBytes: number },
) => Promise<void>) & { close?: () => void };

export interface HttpHandle {
  /** The endpoint, e.g. http://127.0.0.1:43117/mcp. */
  url: string;
  host: string;
  port: number;
  /** Open sessions. */
  sessionCount(): number;
  /** Sessions closed for idleness so far. */
  sessionsReaped(): number;
  close(): Promise<void>;
}

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "::1", "[::1]"];

export { DEFAULT_HTTP_PORT, DEFAULT_SESSION_IDLE_MS } from "./limits.js";

export function isLoopback(host: string): boolean {
  return LOOPBACK_NAMES.includes(host) || /^127\.\d+\.\d+\.\d+$/.test(host);
}

/** The host name of a Host header value ("[::1]:80" → "[::1]", "a.b:1" → "a.b"). */
function hostName(value: string): string {
  const v = value.trim().toLowerCase();
  if (v.startsWith("[")) return v.slice(0, v.indexOf("]") + 1);
  const colon = v.lastIndexOf(":");
  return colon >= 0 ? v.slice(0, colon) : v;
}

function jsonError(res: ServerResponse, status: number, code: number, message: string, headers = {}): void {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json", ...headers });
  res.end(JSON.stringify({ jsonrpc: "2.0", error: { code, message }, id: null }));
}

/** Compares a token in constant time. */
export function sameToken(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

class BodyTooLarge extends Error {}

/** Answers GET /metrics with the Prometheus text `scrape` produces. */
async function serveMetrics(
  req: IncomingMessage,
  res: ServerResponse,
  scrape: () => Promise<{ contentType: string; body: string }>,
): Promise<void> {
  if (req.method !== "GET" && req.method !== "HEAD") {
    res.writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" });
    res.end(`Method ${req.method} is not allowed on /metrics: scrape it with GET.\n`);
    return;
  }
  const { contentType, body } = await scrape();
  res.writeHead(200, { "content-type": contentType, "cache-control": "no-store" });
  res.end(req.method === "HEAD" ? undefined : body);
}

function readBody(req: IncomingMessage, max: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > max) {
      reject(new BodyTooLarge());
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        reject(new BodyTooLarge());
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
}

interface Session {
  transport: StreamableHTTPServerTransport;
  server: McpServer;
  /** Requests in progress, open GET streams included: a session with any is alive. */
  busy: number;
  /** When the last request ended (or the session began). */
  lastActive: number;
}

/** Counts a request against its session until the response closes (a GET stream stays open for long). */
function track(session: Session, res: ServerResponse): void {
  session.busy++;
  session.lastActive = Date.now();
  res.once("close", () => {
    session.busy--;
    session.lastActive = Date.now();
  });
}

/** Why serving on `host` with this token is refused (beyond loopback without a token), or null. */
export function bindProblem(host: string, token: string | undefined): string | null {
  return !isLoopback(host) && !token
    ? `Refusing to serve MCP on ${host} without a bearer token: anyone who can reach that address could read and change your runs. Set a token (--token-env NAME, with the token in that environment variable) or bind to 127.0.0.1.`
    : null;
}

/** Serves MCP over Streamable HTTP; each session gets its own server from `factory`. */
export async function serveHttp(factory: () => McpServer, options: HttpOptions = {}): Promise<HttpHandle> {
  const host = options.host ?? "127.0.0.1";
  const path = options.path ?? "/mcp";
  const maxBody = options.maxBodyBytes ?? 1024 * 1024;
  const token = options.token;
  const refused = bindProblem(host, token);
  if (refused) throw new Error(refused);
  const wildcard = host === "0.0.0.0" || host === "::" || host === "[::]";
  const allowed = new Set<string>([
    ...LOOPBACK_NAMES,
    ...(isLoopback(host) ? [] : [host.toLowerCase(), os.hostname().toLowerCase()]),
    ...(options.allowedHosts ?? []).map((h) => h.toLowerCase()),
  ]);
  const sessions = new Map<string, Session>();
  const maxSessions = options.maxSessions ?? DEFAULT_MAX_SESSIONS;
  /** Initializes being answered: they count against the cap until they become sessions or fail. */
  let opening = 0;

  const hostAllowed = (name: string) => wildcard || allowed.has(name);

  /** True when no token is set or the request carries it; otherwise answers 401 and returns false. */
  function authorized(req: IncomingMessage, res: ServerResponse): boolean {
    if (!token) return true;
    const m = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
    if (m && sameToken(m[1]!.trim(), token)) return true;
    jsonError(res, 401, -32001, "Unauthorized: send Authorization: Bearer <token>.", {
      "www-authenticate": 'Bearer realm="waymark"',
    });
    return false;
  }

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const hostHeader = req.headers.host;
    if (!hostHeader || !hostAllowed(hostName(hostHeader))) {
      jsonError(res, 403, -32000, `Forbidden: Host ${JSON.stringify(hostHeader ?? "")} is not allowed.`);
      return;
    }
    const origin = req.headers.origin;
    if (origin !== undefined) {
      let originHost: string | null = null;
      try {
        originHost = new URL(origin).host;
      } catch {
        originHost = null;
      }
      const ok =
        originHost !== null &&
        (wildcard ? hostName(originHost) === hostName(hostHeader) : allowed.has(hostName(originHost)));
      if (!ok) {
        jsonError(res, 403, -32000, `Forbidden: Origin ${JSON.stringify(origin)} is not allowed.`);
        return;
      }
    }
    const url = new URL(req.url ?? "/", "http://localhost");
    if (options.metrics && url.pathname === "/metrics") {
      if (authorized(req, res)) await serveMetrics(req, res, options.metrics);
      return;
    }
    if (options.mount && url.pathname !== path) {
      await options.mount(req, res, { token, maxBodyBytes: maxBody });
      return;
    }
    if (!authorized(req, res)) return;
    if (url.pathname !== path) {
      jsonError(res, 404, -32601, `Not found: the MCP endpoint is ${path}.`);
      return;
    }
    const sessionId = req.headers["mcp-session-id"];
    const existing = typeof sessionId === "string" ? sessions.get(sessionId) : undefined;
    if (req.method === "POST") {
      let body: unknown;
      try {
        body = JSON.parse(await readBody(req, maxBody));
      } catch (err) {
        if (err instanceof BodyTooLarge)
          jsonError(res, 413, -32000, `Request body is larger than ${maxBody} bytes.`);
        else jsonError(res, 400, -32700, "Parse error: the body is not JSON.");
        return;
      }
      if (existing) {
        track(existing, res);
        await existing.transport.handleRequest(req, res, body);
        return;
      }
      if (sessionId !== undefined) {
        jsonError(
          res,
          404,
          -32001,
          "Session not found: it ended or the server restarted. Initialize a new session.",
        );
        return;
      }
      if (!isInitializeRequest(body)) {
        jsonError(
          res,
          400,
          -32000,
          "Bad Request: send initialize first, then the mcp-session-id header it returns.",
        );
        return;
      }
      if (sessions.size + opening >= maxSessions) {
        jsonError(
          res,
          503,
          -32000,
          `Too many MCP sessions: this server keeps at most ${count(maxSessions)} at once (--max-sessions), and all are open. End the sessions of clients you no longer use (DELETE with their mcp-session-id; an idle one ends by itself after --session-idle minutes), or restart the server with a higher --max-sessions.`,
          { "retry-after": "60" },
        );
        return;
      }
      opening++;
      try {
        const server = factory();
        const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => {
            const session: Session = { transport, server, busy: 0, lastActive: Date.now() };
            sessions.set(id, session);
            track(session, res);
          },
        });
        await server.connect(transport);
        const previous = server.server.onclose;
        server.server.onclose = () => {
          previous?.();
          if (transport.sessionId) sessions.delete(transport.sessionId);
        };
        await transport.handleRequest(req, res, body);
        if (!transport.sessionId) await server.close().catch(() => {});
      } finally {
        opening--;
      }
      return;
    }
    if (req.method === "GET" || req.method === "DELETE") {
      if (!existing) {
        if (sessionId === undefined)
          jsonError(res, 400, -32000, "Bad Request: the mcp-session-id header is missing.");
        else jsonError(res, 404, -32001, "Session not found: it ended or the server restarted.");
        return;
      }
      track(existing, res);
      await existing.transport.handleRequest(req, res);
      return;
    }
    jsonError(res, 405, -32000, `Method ${req.method} is not allowed: use POST, GET or DELETE.`, {
      allow: "GET, POST, DELETE",
    });
  }

  const httpServer = options.server ?? (await listen(host, options.port ?? DEFAULT_HTTP_PORT));
  serveOn(httpServer, (req: IncomingMessage, res: ServerResponse) => {
    handle(req, res).catch((err: unknown) => {
      log("error", "waymark mcp", `HTTP request failed: ${err instanceof Error ? err.message : String(err)}`);
      jsonError(res, 500, -32603, "Internal server error.");
    });
  });
  const idleMs = options.sessionIdleMs ?? DEFAULT_SESSION_IDLE_MS;
  let reaped = 0;
  const reaper = setInterval(
    () => {
      const cutoff = Date.now() - idleMs;
      for (const [id, session] of sessions) {
        if (session.busy > 0 || session.lastActive > cutoff) continue;
        sessions.delete(id);
        reaped++;
        const idle = Date.now() - session.lastActive;
        const shown = idle >= 60_000 ? `${Math.round(idle / 60_000)} min` : `${(idle / 1000).toFixed(1)} s`;
        log(
          "info",
          "waymark mcp",
          `closed HTTP session ${id.slice(0, 8)}… after ${shown} without a request or an open stream`,
          { session: id, idleMs: idle },
        );
        session.server.close().catch(() => {});
      }
    },
    Math.max(10, Math.min(idleMs / 2, 60_000)),
  );
  reaper.unref();
  const address = httpServer.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost}:${address.port}${path}`,
    host: address.address,
    port: address.port,
    sessionCount: () => sessions.size,
    sessionsReaped: () => reaped,
    async close() {
      clearInterval(reaper);
      options.mount?.close?.();
      const open = [...sessions.values()];
      sessions.clear();
      await Promise.all(open.map((s) => s.server.close().catch(() => {})));
      await new Promise<void>((resolve) => {
        httpServer.close(() => resolve());
        httpServer.closeAllConnections();
      });
    },
  };
}
