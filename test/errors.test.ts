import { describe, expect, it } from "vitest";
import {
  ERROR_CODES,
  isErrorCode,
  NoCodeError,
  RunNotFoundError,
  StateReadOnlyError,
  VersionMissingError,
} from "../src/errors.js";

describe("error codes: one closed set", () => {
  it("tells Waymark's codes from other strings (a code read back from another process)", () => {
    expect(isErrorCode("RUN_BUSY")).toBe(true);
    expect(isErrorCode("REPLAY_DIVERGED")).toBe(true);
    expect(isErrorCode("EPERM")).toBe(false);
    expect(isErrorCode(undefined)).toBe(false);
    expect(new Set(ERROR_CODES).size).toBe(ERROR_CODES.length);
  });

  it("gives each outcome its class, its code and the facts", () => {
    expect(new RunNotFoundError(7)).toMatchObject({ code: "RUN_NOT_FOUND", details: { id: 7 } });
    expect(new RunNotFoundError(7).message).toBe("There is no run #7.");
    expect(new NoCodeError("no code here").code).toBe("NO_CODE");
    expect(new VersionMissingError(["a version 1"])).toMatchObject({
      code: "VERSION_MISSING",
      details: { missing: ["a version 1"] },
    });
    const readOnly = new StateReadOnlyError("invoice/1", "total");
    expect(readOnly.code).toBe("STATE_READ_ONLY");
    expect(readOnly.message).toContain("step.state.total = ...");
  });
});
