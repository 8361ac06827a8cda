// The stdio transport: one session over the process's stdin/stdout. stdout carries only the protocol.
//
// IMPORTANT: the reading side is ours, not the SDK's StdioServerTransport, which closes the session
// (and so the process, silently) on one line over its buffer and answers nothing to invalid JSON. Here
// every line gets an answer or is a message: a line over `maxLineBytes` is skipped to its newline and
// answered -32600 (with its request's id when it could be read), invalid JSON -32700, a batch (an array,
// which MCP 2025-06-18 does not allow) and anything that is not a JSON-RPC message -32600; each refusal
// is logged to stderr, and the session goes on with the next line.

import { type Readable, Writable } from "node:stream";
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import { type JSONRPCMessage, JSONRPCMessageSchema } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.js";
import { cutText } from "./budget.js";
import { count } from "./limits.js";
import { type LineEvent, LineReader, type RequestId } from "./line-reader.js";

/** Longest line read from stdin, in bytes (the SDK's own limit; an HTTP body may hold 1 MiB). */
export const DEFAULT_MAX_LINE_BYTES = 10 * 1024 * 1024;

export interface StdioSession {
  /** Resolves when the client goes away (stdin ends) or close() is called. */
  closed: Promise<void>;
  close(): Promise<void>;
}

function warn(line: string): void {
  log("warn", "waymark mcp", line);
}

/** The id of a parsed value that is not a valid message, when it has one a response may carry. */
function idOf(value: unknown): RequestId {
  const id = (value as { id?: unknown } | null)?.id;
  return typeof id === "string" || (typeof id === "number" && Number.isFinite(id)) ? id : null;
}

/** A server transport over a readable and a writable stream, one JSON-RPC message per line each way. */
export class StdioLineTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;
  private readonly reader: LineReader;
  private started = false;

  constructor(
    private readonly stdin: Readable,
    private readonly stdout: Writable,
    readonly maxLineBytes = DEFAULT_MAX_LINE_BYTES,
  ) {
    this.reader = new LineReader(maxLineBytes);
  }

  private readonly ondata = (chunk: Buffer | string) => {
    for (const event of this.reader.push(typeof chunk === "string" ? Buffer.from(chunk) : chunk)) {
      // A throw out of a data handler ends the process: log it, and go on with the next line.
      try {
        this.handle(event);
      } catch (err) {
        warn(`handling a line from stdin threw, the session goes on: ${cutText(String(err), 300)}`);
      }
    }
  };

  private readonly onStdinError = (error: Error) => this.onerror?.(error);

  async start(): Promise<void> {
    if (this.started) throw new Error("StdioLineTransport already started");
    this.started = true;
    this.stdin.on("data", this.ondata);
    this.stdin.on("error", this.onStdinError);
  }

  private handle(event: LineEvent): void {
    if (event.kind === "overlong") {
      this.refuse(
        event.id,
        -32600,
        `Request too large: the line held ${count(event.bytes)} bytes, more than the ${count(this.maxLineBytes)} this server reads in one message. Nothing of it was read; send smaller values (a message body of that size belongs in your application, not in a request).`,
      );
      return;
    }
    const text = event.text;
    if (text.trim() === "") return;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (err) {
      this.refuse(
        null,
        -32700,
        `Parse error: the line is not JSON (${(err as Error).message}). Send one JSON-RPC message per line, each ending with a newline.`,
      );
      return;
    }
    if (Array.isArray(value)) {
      this.refuse(
        null,
        -32600,
        "Invalid Request: JSON-RPC batches (arrays of messages) are not supported in MCP 2025-06-18. Send each message on its own line.",
      );
      return;
    }
    const parsed = JSONRPCMessageSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      this.refuse(
        idOf(value),
        -32600,
        `Invalid Request: not a JSON-RPC 2.0 message${issue ? ` (${issue.message}${issue.path.length ? ` at ${issue.path.join(".")}` : ""})` : ""}. A request is {"jsonrpc": "2.0", "id": 1, "method": "...", "params": {...}}.`,
      );
      return;
    }
    this.onmessage?.(parsed.data);
  }

  /** Answers a line that is no message: an error response (id null when none could be read), and a log line. */
  private refuse(id: RequestId, code: number, message: string): void {
    warn(
      `refused a line from stdin (${code}${id === null ? "" : `, request id ${JSON.stringify(id)}`}): ${cutText(message, 300)}`,
    );
    this.write({ jsonrpc: "2.0", id, error: { code, message } }).catch((err: unknown) =>
      this.onerror?.(err as Error),
    );
  }

  private write(value: unknown): Promise<void> {
    return new Promise((resolve) => {
      if (this.stdout.write(`${JSON.stringify(value)}\n`)) resolve();
      else this.stdout.once("drain", resolve);
    });
  }

  send(message: JSONRPCMessage): Promise<void> {
    return this.write(message);
  }

  async close(): Promise<void> {
    this.stdin.off("data", this.ondata);
    this.stdin.off("error", this.onStdinError);
    if (this.stdin.listenerCount("data") === 0) this.stdin.pause();
    this.onclose?.();
  }
}

/** Connects a server from `factory` to stdin/stdout. */
export async function serveStdio(
  factory: () => McpServer,
  stdin: Readable = process.stdin,
  stdout: Writable = process.stdout,
  maxLineBytes = DEFAULT_MAX_LINE_BYTES,
): Promise<StdioSession> {
  const server = factory();
  const transport = new StdioLineTransport(stdin, stdout, maxLineBytes);
  let resolveClosed!: () => void;
  const closed = new Promise<void>((resolve) => {
    resolveClosed = resolve;
  });
  await server.connect(transport);
  // Nothing that goes wrong on the channel passes silently.
  server.server.onerror = (err) => warn(`stdio: ${err instanceof Error ? err.message : String(err)}`);
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
