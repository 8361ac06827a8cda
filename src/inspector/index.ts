// The run inspector: a page at `/` and its JSON API at `/api`, mounted on the MCP HTTP server
// (serveHttp's `mount`), so it sits behind the same Host/Origin checks and the same bearer token.
//
//   /                    the page (./static: Preact panels, no build step; see its README section)
//   /assets/<file>       its scripts and styles
//   /api/...             JSON (see api.ts); /api/events streams changes (see sse.ts)
//   /?token=<token>      when a token is set: starts a session (a cookie) and redirects without the token

import type { IncomingMessage, ServerResponse } from "node:http";
import type { WaymarkEngine } from "../engine/api.js";
import type { HttpMount } from "../mcp/http.js";
import { type Diagnose, InspectorApi } from "./api.js";
import { Assets } from "./assets.js";
import { authorized, credential, denyPage, login } from "./auth.js";
import { ApiError, sendError, sendJson, toApiError } from "./respond.js";
import { Sessions } from "./sessions.js";
import { streamEvents } from "./sse.js";

export type { Diagnose } from "./api.js";

export interface InspectorOptions {
  /** Show runs only: the page hides its actions and the API refuses them. */
  readOnly?: boolean;
  /** Explains a run for the diagnosis panel (default: the diagnosis module, as diagnose_run uses it). */
  diagnose?: Diagnose;
  /** Largest JSON body of an action in bytes (default: the HTTP server's limit, at most 256 KiB). */
  maxBodyBytes?: number;
  /** How long a login (`/?token=`) lasts, in ms of the engine's clock (default 12 hours). */
  sessionTtlMs?: number;
  /** Serve the page from this directory instead of ./static (bench/inspector.ts compares two versions). */
  pageDir?: string;
}

/** The inspector as a mount for serveHttp: `serveHttp(factory, { mount: createInspector(engine) })`. */
export function createInspector(engine: WaymarkEngine, options: InspectorOptions = {}): HttpMount {
  const assets = new Assets(options.pageDir);
  const sessions = new Sessions({ now: () => engine.clock.now(), ttlMs: options.sessionTtlMs });
  let api: InspectorApi | null = null; // made on the first request, when the server's body limit is known
  const apiFor = (maxBodyBytes: number) =>
    (api ??= new InspectorApi(engine, {
      readOnly: options.readOnly ?? false,
      maxBodyBytes: options.maxBodyBytes ?? Math.min(maxBodyBytes, 256 * 1024),
      diagnose: options.diagnose ?? ((e, runId) => e.diagnose(runId)),
    }));

  const mount: HttpMount = async (req: IncomingMessage, res: ServerResponse, guard) => {
    const url = new URL(req.url ?? "/", "http://localhost");
    const method = req.method ?? "GET";
    const parts = url.pathname.split("/").slice(1);
    const isApi = parts[0] === "api";
    try {
      if (!isApi) {
        if (method !== "GET" && method !== "HEAD") {
          throw new ApiError(
            405,
            "METHOD_NOT_ALLOWED",
            `Method ${method} is not allowed: the page is read with GET.`,
          );
        }
        if (url.pathname === "/" && login(req, res, url, guard.token, sessions)) return;
        const file =
          url.pathname === "/"
            ? "index.html"
            : parts[0] === "assets" && parts.length === 2
              ? parts[1]!
              : null;
        if (file === null || !assets.has(file)) {
          throw new ApiError(
            404,
            "NOT_FOUND",
            `Nothing at ${url.pathname}: the inspector is at / and MCP at /mcp.`,
          );
        }
        if (!authorized(req, guard.token, sessions)) {
          if (file === "index.html") denyPage(res, "Open the link with the token once to use the inspector.");
          else throw unauthorized();
          return;
        }
        assets.send(req, res, file);
        return;
      }
      if (!authorized(req, guard.token, sessions)) throw unauthorized();
      if (parts[1] === "events" && parts.length === 2) {
        if (method !== "GET") throw new ApiError(405, "METHOD_NOT_ALLOWED", "Open /api/events with GET.");
        streamEvents(engine, req, res, url);
        return;
      }
      const who = credential(req, guard.token, sessions);
      const { body } = await apiFor(guard.maxBodyBytes).handle(req, url, parts.slice(1), who);
      sendJson(res, 200, body);
    } catch (err) {
      const apiErr = toApiError(err);
      const headers: Record<string, string> = {};
      if (apiErr.status === 401) headers["www-authenticate"] = 'Bearer realm="waymark"';
      if (apiErr.status === 413) headers.connection = "close";
      sendError(res, apiErr, headers);
    }
  };
  // The server stopping ends every login: a cookie never outlives the server that issued it.
  mount.close = () => sessions.revokeAll();
  return mount;
}

function unauthorized(): ApiError {
  return new ApiError(
    401,
    "UNAUTHORIZED",
    "Send Authorization: Bearer <token>, or open the inspector once as /?token=<token> to get a session cookie.",
  );
}
