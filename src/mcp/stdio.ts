// The stdio transport: one session over the process's stdin/stdout. stdout carries only the protocol.

import type { Readable, Writable } from "node:stream";
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
