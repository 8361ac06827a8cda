import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor } from "../../src/engine/cursor.js";
import { InvalidCursorError } from "../../src/errors.js";

describe("page cursors (one codec for runs and history pages)", () => {
  it("gives back the numbers it was made of", () => {
    expect(decodeCursor(encodeCursor([1_700_000_000_000, 42]), 2)).toEqual([1_700_000_000_000, 42]);
  });

  it.each([
    ["not base64 JSON", "garbage!"],
    ["the wrong number of parts", encodeCursor([1, 2, 3])],
    ["a part that is not a whole number", Buffer.from(JSON.stringify([1, 2.5])).toString("base64url")],
    ["an object", Buffer.from(JSON.stringify({ r: 1, a: 2 })).toString("base64url")],
  ])("refuses %s with INVALID_INPUT and the fix", (_what, cursor) => {
    let caught: unknown;
    try {
      decodeCursor(cursor, 2);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(InvalidCursorError);
    expect((caught as InvalidCursorError).code).toBe("INVALID_INPUT");
    expect((caught as Error).message).toMatch(/Invalid cursor .*nextCursor of the previous page unchanged/);
  });
});
