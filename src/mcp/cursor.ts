// Opaque cursors for pages this layer cuts itself (history): base64url JSON, bound to one run.

import { ToolError } from "./errors.js";

export function encodeCursor(runId: number, after: number): string {
  return Buffer.from(JSON.stringify({ r: runId, a: after })).toString("base64url");
}

/** The entry id to continue after; throws a ToolError for a cursor that is malformed or of another run. */
export function decodeCursor(cursor: string, runId: number): number {
  try {
    const v = JSON.parse(Buffer.from(cursor, "base64url").toString()) as { r?: unknown; a?: unknown };
    if (v.r === runId && Number.isSafeInteger(v.a) && (v.a as number) >= 0) return v.a as number;
    if (Number.isInteger(v.r) && v.r !== runId) {
      throw new ToolError(
        "INVALID_CURSOR",
        "This cursor belongs to another run's history. Pass the nextCursor of a previous page of this run, or omit it to start at the beginning.",
      );
    }
  } catch (err) {
    if (err instanceof ToolError) throw err;
  }
  throw new ToolError(
    "INVALID_CURSOR",
    `Invalid cursor ${JSON.stringify(cursor.slice(0, 80))}: pass the nextCursor of the previous page unchanged, or omit it to start at the beginning.`,
  );
}
