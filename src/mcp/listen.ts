// Binding the HTTP listener apart from serving on it: the CLI binds first and opens the database after, so
// a port in use (or an address this machine does not have) refuses before any file is created.

import http from "node:http";
import { sentence } from "../errors.js";

/** Why the listener could not bind `host:port`, as a sentence with the fix. */
export class ListenError extends Error {
  constructor(
    readonly host: string,
    readonly port: number,
    readonly code: string | undefined,
    cause: unknown,
    freePort: string,
  ) {
    const where = `${host.includes(":") ? `[${host}]` : host}:${port}`;
    const why =
      code === "EADDRINUSE"
        ? `the port is in use. Stop what holds it or choose another port (${freePort} picks a free one).`
        : code === "EACCES"
          ? `permission denied (ports below 1024 need privileges). Choose a port above 1023 (${freePort} picks a free one).`
          : code === "EADDRNOTAVAIL"
            ? "this machine has no such address. Bind to 127.0.0.1 or to one of this machine's addresses."
            : sentence(cause instanceof Error ? cause.message : String(cause));
    super(`Cannot listen on ${where}: ${why}`, { cause });
    this.name = "ListenError";
  }
}

/**
 * An HTTP server bound to `host:port` with no handler yet (serveHttp takes it as `server`); ListenError when
 * it cannot bind, whose fix names `freePort`, the option that picks a free port.
 */
export async function listen(
  host: string,
  port: number,
  freePort = "--http 127.0.0.1:0",
): Promise<http.Server> {
  // Until serveHttp takes the server over, a request (a client retrying while the database opens and the
  // registry loads) is told to come back, not left hanging.
  const server = http.createServer(answerStarting);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(new ListenError(host, port, err.code, err, freePort)),
    );
    server.listen(port, host, () => resolve());
  });
  server.removeAllListeners("error");
  return server;
}

/** Serves `handler` on a server bound with listen(), in place of the answer it gave while starting. */
export function serveOn(server: http.Server, handler: http.RequestListener): void {
  server.off("request", answerStarting);
  server.on("request", handler);
}

/** The answer while the server starts: 503 with Retry-After, as a JSON-RPC error naming what to do. */
function answerStarting(_req: http.IncomingMessage, res: http.ServerResponse): void {
  res.writeHead(503, { "content-type": "application/json", "retry-after": "1" }).end(
    JSON.stringify({
      jsonrpc: "2.0",
      id: null,
      error: {
        code: -32000,
        message: "The Waymark server is starting (opening its database); retry in a second.",
      },
    }),
  );
}
