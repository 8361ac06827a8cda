// Bounds on what a client may send and hold: every string argument of a tool, prompt or resource
// address has one, and so do sessions and subscriptions, so no request makes the server keep, search or
// echo megabytes. Message bodies (send_message body, start_run input, call_action args) are bounded by
// the transport instead: an HTTP body or a stdio line (see http.ts and stdio.ts).

import { z } from "zod";

/** Longest string of each kind a client may send, in characters. */
export const LIMITS = {
  /** Workflow, queue and action names (written in code: short). */
  name: 200,
  /** Run keys: the engine's own limit. */
  key: 512,
  /** Substring filters (keyContains, errorContains). */
  filter: 512,
  /** Times (ISO or milliseconds). */
  time: 64,
  /** Opaque page cursors this server hands out. */
  cursor: 512,
  /** Entry paths or ids ("notify[mail]/send"). */
  step: 2000,
  /** Idempotency keys of messages. */
  idempotencyKey: 256,
  /** A resource address (subscribe, read). */
  uri: 4096,
  /** A completion's typed prefix or context argument. */
  completion: 2000,
  /** A tag's name or value (the engine's limits are tighter, 64 and 256: it refuses what passes these, naming them). */
  tag: 1024,
} as const;

/** Open HTTP sessions a server keeps at once; more initializes answer 503 (`--max-sessions`). */
export const DEFAULT_MAX_SESSIONS = 100;
/** The port of `waymark mcp --http` and the demo when none is given (here, not in http.ts: the CLI's option
 * parsing needs it without loading the HTTP transport). */
export const DEFAULT_HTTP_PORT = 3920;
/** How long an HTTP session may sit idle before it is closed, in ms. */
export const DEFAULT_SESSION_IDLE_MS = 30 * 60_000;

/** Subscriptions one session may hold at once. */
export const DEFAULT_MAX_SUBSCRIPTIONS = 1000;

/** "2,000,000" */
export function count(n: number): string {
  return n.toLocaleString("en-US");
}

/**
 * A string argument of at most `max` characters; a longer one is refused before any handler runs, with
 * a message that names the bound and the length received (never the value).
 */
export function bounded(max: number, what: string): z.ZodString {
  return z.string().max(max, {
    error: (issue) =>
      `${what} is too long: ${typeof issue.input === "string" ? `${count(issue.input.length)} characters` : "more"}, at most ${count(max)} are accepted`,
  });
}
