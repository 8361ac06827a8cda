// The stdio transport: one session over the process's stdin/stdout. stdout carries only the protocol.

import { type Readable, Writable } from "node:stream";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";

export interface StdioSession {
  /** Resolves when the client goes away (stdin ends) or close() is called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

/** Connects a server from `factory` to stdin/stdout. */
export async function serveStdio(
  factory: () => McpServer,
  stdin: Readable = process.stdin,
  stdout: Writable = process.stdout,
): Promise<StdioSession> {
  const server = factory();
  const transport = new StdioServerTransport(stdin, stdout);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  await server.connect(transport);
  const previous = server.server.onclose;
  server.server.onclose = () => {
    previous?.();
    resolveClosed();
  };
  const onEnd = () => void server.close().catch(() => resolveClosed());
  stdin.once("end", onEnd);
  stdin.once("close", onEnd);
  return {
    closed,
    async close() {
      stdin.off("end", onEnd);
      stdin.off("close", onEnd);
      await server.close().catch(() => {});
      resolveClosed();
    },
  };
}

/**
 * Keeps stdout for the protocol: returns a stream that writes to the real stdout, and sends everything else
 * written to process.stdout (console.log in workflow code, a registry module's own output) to stderr, where
 * it shows in the client's logs instead of breaking the JSON-RPC stream. Call it before loading user code.
 */
export function claimStdout(): Writable {
  const stdout = process.stdout;
  const write = stdout.write.bind(stdout) as (chunk: unknown, cb: (err?: Error | null) => void) => boolean;
  const protocol = new Writable({
    write(chunk, _encoding, callback) {
      write(chunk, callback);
    },
  });
  stdout.write = ((chunk: unknown, ...rest: unknown[]) =>
    (process.stderr.write as (...a: unknown[]) => boolean)(chunk, ...rest)) as typeof stdout.write;
  return protocol;
}
