import { describe, expect, it } from "vitest";
import { tempDir } from "../helpers.js";
import { formatReport, torture } from "./harness.js";

describe("crash torture (short)", () => {
  it("survives SIGKILL from outside, inside steps and inside commits: nothing lost, nothing run twice without a crash", async () => {
    const report = await torture({ dir: tempDir(), seed: 7, kills: 12, perWorkflow: 1 });
    process.stderr.write(`${formatReport(report)}\n`);
    expect(report.violations).toEqual([]);
    expect(report.integrity).toBe("ok");
    expect(report.kills.total).toBe(12);
    expect(report.runs).toBeGreaterThanOrEqual(4);
  }, 240_000);
});
