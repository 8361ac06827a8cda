import { describe, expect, it } from "vitest";
import { brief, errorLine, iso } from "../src/format.js";

describe("the wording helpers shared by MCP answers, diagnoses and the CLI", () => {
  it("write no time as null (prose says what it means) and a time no Date can hold without throwing", () => {
    expect(iso(null)).toBeNull();
    expect(iso(undefined)).toBeNull();
    expect(iso(0)).toBe("1970-01-01T00:00:00.000Z");
    expect(iso(8.64e15 + 1)).toBe("an invalid time (8640000000000001)");
  });

  it("write no error as null, an error as one cut line", () => {
    expect(errorLine(null)).toBeNull();
    expect(errorLine({ name: "TypeError", message: "x".repeat(50) }, 20)).toBe(
      `TypeError: ${"x".repeat(9)}…`,
    );
  });

  it("show a value JSON cannot hold instead of throwing", () => {
    const circular: Record<string, unknown> = {};
    circular.self = circular;
    expect(brief(circular)).toBe("[object Object]");
    expect(brief(10n)).toBe("10");
    expect(brief({ a: "y".repeat(200) }, 10)).toBe('{"a":"yyyy…');
  });
});
