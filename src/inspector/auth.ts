// The inspector's side of the bearer token: a browser cannot send an Authorization header, so opening
// the page once with `?token=<token>` sets an HttpOnly, SameSite=Strict cookie and redirects to a clean URL.
//
// IMPORTANT: the cookie holds an HMAC of the token, never the token itself (which also opens /mcp), and
// is named after the port, so two servers on one machine keep their own. A request is let in by a
// matching `Authorization: Bearer <token>` header or by the cookie.

import { createHmac } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { sameToken } from "../mcp/http.js";

function cookieName(req: IncomingMessage): string {
  return `waymark_inspector_${req.socket.localPort ?? 0}`;
}

function cookieValue(token: string): string {
  return createHmac("sha256", token).update("waymark inspector session").digest("base64url");
}

function cookies(req: IncomingMessage): Map<string, string> {
  const map = new Map<string, string>();
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const eq = part.indexOf("=");
    if (eq > 0) map.set(part.slice(0, eq).trim(), part.slice(eq + 1).trim());
  }
  return map;
}

/** True when the request carries the token (header) or the session cookie. */
export function authorized(req: IncomingMessage, token: string | undefined): boolean {
  if (!token) return true;
  const bearer = /^Bearer\s+(.+)$/i.exec(req.headers.authorization ?? "");
  if (bearer && sameToken(bearer[1]!.trim(), token)) return true;
  const cookie = cookies(req).get(cookieName(req));
  return cookie !== undefined && sameToken(cookie, cookieValue(token));
}

/**
 * Handles `?token=` on a page request: a right token sets the cookie and redirects to the same URL
 * without it; a wrong one answers 401. Returns false when the URL has no token parameter.
 */
export function login(
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
  token: string | undefined,
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
    "set-cookie": `${cookieName(req)}=${cookieValue(token)}; Path=/; HttpOnly; SameSite=Strict`,
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
<code>http://&lt;host&gt;:&lt;port&gt;/?token=&lt;the token&gt;</code>: the page then remembers it in a cookie
for this browser session and removes it from the address bar.</p></body></html>`;
  res.writeHead(401, {
    "content-type": "text/html; charset=utf-8",
    "www-authenticate": 'Bearer realm="waymark"',
    "cache-control": "no-store",
    "x-content-type-options": "nosniff",
    "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'",
  });
  res.end(html);
}
