// The one codec for opaque page cursors (runs pages, history pages): base64url JSON of whole numbers,
// checked on the way back in so that a cursor edited or made up is refused with the fix.

import { InvalidCursorError } from "../errors.js";

/** A cursor holding `parts` (keyset values: times, ids). */
export function encodeCursor(parts: readonly number[]): string {
  return Buffer.from(JSON.stringify(parts)).toString("base64url");
}

/** The `arity` whole numbers a cursor of encodeCursor holds; InvalidCursorError for anything else. */
export function decodeCursor(cursor: string, arity: number): number[] {
  try {
    const parts = JSON.parse(Buffer.from(cursor, "base64url").toString()) as unknown;
    // Whole numbers a store can compare (a BIGINT on PostgreSQL): 1e300 or -1 were never issued.
    if (
      Array.isArray(parts) &&
      parts.length === arity &&
      parts.every((p) => Number.isSafeInteger(p) && (p as number) >= 0)
    )
      return parts as number[];
  } catch {
    // not JSON: refused below
  }
  throw new InvalidCursorError(cursor);
}
