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
  const server = http.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(new ListenError(host, port, err.code, err, freePort)),
    );
    server.listen(port, host, () => resolve());
  });
  server.removeAllListeners("error");
  return server;
}
