// Small HTTP plumbing for the inspector: JSON answers, JSON bodies with a size limit, errors to statuses.

import type { IncomingMessage, ServerResponse } from "node:http";
import { log } from "../log.js";

/** An answer the API gives on purpose: a status, a stable code and a message that says what to do. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** Headers every inspector answer carries. */
export const BASE_HEADERS = {
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store",
} as const;

export function sendJson(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...BASE_HEADERS,
    "content-type": "application/json; charset=utf-8",
    "content-length": Buffer.byteLength(text),
  });
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError, headers: Record<string, string> = {}): void {
  for (const [k, v] of Object.entries(headers)) if (!res.headersSent) res.setHeader(k, v);
  sendJson(res, err.status, {
    error: { code: err.code, message: err.message, ...(Object.keys(err.details).length ? err.details : {}) },
  });
}

/** HTTP status for an engine error code (duck-typed: the engine may come from another copy of the package). */
const STATUS_BY_CODE: Record<string, number> = {
  RUN_NOT_FOUND: 404,
  ENTRY_NOT_FOUND: 404,
  WORKFLOW_NOT_FOUND: 404,
  QUEUE_NOT_FOUND: 400,
  INVALID_INPUT: 400,
  INVALID_MESSAGE: 400,
  INVALID_NAME: 400,
  NOT_SERIALIZABLE: 400,
  RUN_FINISHED: 409,
  RUN_BUSY: 409,
  REPLAY_NEEDS_STEP: 409,
  REPLAY_REFUSED: 409,
  HISTORY_DIVERGED: 409,
  NO_CODE: 409,
  ENGINE_CLOSED: 503,
  PLAN_NOT_FOUND: 404,
  PLAN_EXPIRED: 410,
  PLAN_BUSY: 409,
};

/** Turns anything a route threw into an ApiError; unexpected errors are logged and hidden. */
export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  if (typeof code === "string" && /^[A-Z_]+$/.test(code)) {
    const details = (err as { details?: unknown }).details;
    return new ApiError(
      STATUS_BY_CODE[code] ?? 400,
      code,
      (err as Error).message,
      code === "INVALID_MESSAGE" && details && typeof details === "object"
        ? { problems: (details as { problems?: unknown }).problems }
        : {},
    );
  }
  log("error", "waymark inspector", err instanceof Error ? (err.stack ?? err.message) : String(err));
  return new ApiError(500, "INTERNAL", "Unexpected error; the server's stderr log has details.");
}

/** Reads a JSON request body of at most `max` bytes; refuses other content types (a CSRF guard too). */
export async function readJson(req: IncomingMessage, max: number): Promise<unknown> {
  const type = (req.headers["content-type"] ?? "").split(";")[0]!.trim().toLowerCase();
  if (type !== "application/json") {
    throw new ApiError(
      415,
      "UNSUPPORTED_MEDIA_TYPE",
      "Send the body as JSON with Content-Type: application/json.",
    );
  }
  const declared = Number(req.headers["content-length"] ?? "0");
  if (declared > max) throw tooLarge(max);
  const text = await new Promise<string>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > max) {
        // Stop collecting; the 413 answer closes the connection, which ends the upload.
        req.off("data", onData);
        req.resume();
        reject(tooLarge(max));
        return;
      }
      chunks.push(chunk);
    };
    req.on("data", onData);
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
    req.on("error", reject);
  });
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new ApiError(400, "INVALID_JSON", "The request body is not valid JSON.");
  }
}

function tooLarge(max: number): ApiError {
  return new ApiError(413, "BODY_TOO_LARGE", `The request body is larger than ${max} bytes.`, {});
}
