// The inspector's side of the bearer token: a browser cannot send an Authorization header, so opening
// the page once with `?token=<token>` starts a session (an HttpOnly, SameSite=Strict cookie) and
// redirects to the same URL without the token, so the address bar and the history never keep it.
//
// IMPORTANT: the cookie holds a random session id of this server (sessions.ts), never the token (which
// also opens /mcp) nor anything derived from it. A request is let in by a matching
// `Authorization: Bearer <token>` header or by a live session's cookie.

import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AuditClient } from "../engine/audit-types.js";
import { sameToken } from "../mcp/http.js";
import type { Sessions } from "./sessions.js";

function cookieName(req: IncomingMessage, sessions: Sessions): string {
  return sessions.cookieName(req.socket.localPort ?? 0);
}

function cookies(req: IncomingMessage): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) map.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return map;
}

/** True when the request carries the token (header) or the cookie of a live session. */
export function authorized(req: IncomingMessage, token: string | undefined, sessions: Sessions): boolean {
  if (!token) return true;
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
  if (bearer && sameToken(bearer[1]!.trim(), token)) return true;
  const cookie = cookies(req).get(cookieName(req, sessions));
  return cookie !== undefined && sessions.valid(cookie);
}

/**
 * Who made a request, for the audit: the bearer token, or the login session (a label hashed from its id,
 * which is a secret and never stored), with the browser's user agent; nothing when the server has no token.
 */
export function credential(req: IncomingMessage, token: string | undefined, sessions: Sessions): AuditClient {
  const agent = req.headers["user-agent"];
  const client: AuditClient = typeof agent === "string" ? { name: agent.slice(0, 200) } : {};
  if (!token) return client;
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
  if (bearer && sameToken(bearer[1]!.trim(), token)) return { ...client, label: "bearer token" };
  const cookie = cookies(req).get(cookieName(req, sessions));
  if (cookie === undefined) return client;
  const hash = createHash("sha256").update(cookie).digest("hex").slice(0, 12);
  return { ...client, label: "login session", session: `login-${hash}` };
}

/**
 * Handles `?token=` on a page request: a right token starts a session, sets its cookie and redirects
 * to the same URL without the token; a wrong one answers 401. Returns false when the URL has no token.
 */
export function login(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  token: string | undefined,
  sessions: Sessions,
): boolean {
  const given = url.searchParams.get("token");
  if (given === null) return false;
  url.searchParams.delete("token");
  const clean = `${url.pathname}${url.search}`;
  if (!token) {
    res.writeHead(303, { location: clean, "referrer-policy": "no-referrer" });
    res.end();
    return true;
  }
  if (!sameToken(given, token)) {
    denyPage(res, "The token in the link is not this server's token.");
    return true;
  }
  res.writeHead(303, {
    location: clean,
    "set-cookie": `${cookieName(req, sessions)}=${sessions.create()}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${Math.floor(sessions.ttlMs / 1000)}`,
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
  });
  res.end();
  return true;
}

/** The 401 page a browser sees without the token: it says how to get in. */
export function denyPage(res: ServerResponse, why: string): void {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Waymark inspector: token required</title>
<meta name="viewport" content="width=device-width"></head><body style="font-family:system-ui,sans-serif;max-width:40em;margin:3em auto;padding:0 1em">
<h1>Token required</h1><p>${why}</p>
<p>This server was started with a bearer token (<code>--token-env NAME</code>). Open the inspector once as
<code>http://&lt;host&gt;:&lt;port&gt;/?token=&lt;the token&gt;</code>: the server then starts a session for this
browser (a cookie that ends when the server stops or the session expires) and removes the token from
the address bar; open the link again after either.</p></body></html>`;
  res.writeHead(401, {
    "content-type": "text/html; charset=utf-8",
    "www-authenticate": 'Bearer realm="waymark"',
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
  });
  res.end(html);
}
