// The pieces a diagnosis is built from: message normalisation, name resemblance, body repair, stack frames.

import path from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { plural, span } from "../../src/diagnosis/format.js";
import { normaliseMessage, signatureOf } from "../../src/diagnosis/index.js";
import { editDistance, keyResemblance, resemblance } from "../../src/diagnosis/near-misses.js";
import { repairBody } from "../../src/diagnosis/repair.js";
import { frameText, parseStack, topUserFrame } from "../../src/diagnosis/stack.js";

describe("normaliseMessage", () => {
  it("replaces numbers, ids, times and quoted values, and keeps the words", () => {
    expect(normaliseMessage("tax quote failed: 503")).toBe("tax quote failed: <n>");
    expect(normaliseMessage('Order "A-17" for cust_42 failed at 2026-01-01T10:00:00.000Z after 3.5 s')).toBe(
      'Order "<v>" for <id> failed at <time> after <n> s',
    );
    expect(normaliseMessage("card ending 4242 expired in 2025-11")).toBe("card ending <n> expired in <date>");
    expect(
      normaliseMessage("job 3f2a1c9e-0000-4000-8000-00000000abcd: connect ECONNREFUSED 10.0.0.7:443"),
    ).toBe("job <id>: connect ECONNREFUSED <n>:<n>");
    expect(normaliseMessage("Cannot read properties of null (reading 'email')")).toBe(
      'Cannot read properties of null (reading "<v>")',
    );
  });

  it("gives runs failing the same way one signature, and different failures different ones", () => {
    const key = (message: string, entry = "charge") => ({
      workflow: "w",
      entry,
      errorName: "Error",
      message,
    });
    expect(signatureOf(key("order 17 failed: 503"))).toBe(signatureOf(key("order 18 failed: 502")));
    expect(signatureOf(key("order 17 failed"))).not.toBe(signatureOf(key("order 17 declined")));
    expect(signatureOf(key("x", "charge"))).not.toBe(signatureOf(key("x", "refund")));
    expect(signatureOf(key("x"))).toMatch(/^[0-9a-f]{12}$/);
  });
});

describe("plural", () => {
  it("spells counts of entries, processes and attempts", () => {
    expect(plural(1, "entry")).toBe("1 entry");
    expect(plural(4, "entry")).toBe("4 entries");
    expect(plural(2, "process")).toBe("2 processes");
    expect(plural(3, "attempt")).toBe("3 attempts");
    expect(plural(2, "day")).toBe("2 days");
  });
});

describe("resemblance", () => {
  it("finds typos, case and separator differences, and nothing in unrelated names", () => {
    expect(editDistance("approvals", "approval")).toBe(1);
    expect(resemblance("approvals", "approval")).toBe("differs by 1 character");
    expect(resemblance("order-7", "Order-7")).toBe("differs only in letter case");
    expect(resemblance("order-7", "order_7")).toBe("differs only in separators");
    expect(resemblance("decisions", "shipments")).toBeNull();
    expect(resemblance("a", "b")).toBe("differs by 1 character");
    expect(resemblance("ab", "xy")).toBeNull();
    expect(resemblance("same", "same")).toBeNull();
  });
  it("run keys with different numbers name different things, however close", () => {
    expect(keyResemblance("att-3", "att-4")).toBeNull();
    expect(keyResemblance("order-1001", "order-1002")).toBeNull();
    expect(keyResemblance("order-7", "order-77")).toBeNull();
    expect(keyResemblance("order-7", "Order-7")).toBe("differs only in letter case");
    expect(keyResemblance("order-07", "order_7")).toBe("differs by 2 characters");
    expect(keyResemblance("ordr-7", "order-7")).toBe("differs by 1 character");
  });
});

describe("repairBody", () => {
  const schema = z.object({ approve: z.boolean(), by: z.string(), amount: z.number().optional() });
  it("coerces what is unambiguous", () => {
    expect(repairBody(schema, { approve: "yes", by: 7, amount: "12.5" })).toEqual({
      body: { approve: true, by: "7", amount: 12.5 },
      changes: ['approve: "yes" → true', 'by: 7 → "7"', 'amount: "12.5" → 12.5'],
    });
  });
  it("leaves the rest to a person", () => {
    expect(repairBody(schema, { approve: "maybe", by: "x" })).toBeNull();
    expect(repairBody(schema, { by: "x" })).toBeNull();
    expect(repairBody(schema, { approve: true, by: "x" })).toBeNull(); // nothing to repair
    expect(repairBody(schema, "text")).toBeNull();
  });
});

describe("stack frames", () => {
  it("skips Node internals, dependencies and Waymark itself", () => {
    const cwd = "/app";
    const own = path.resolve(import.meta.dirname, "../../src/engine/step.ts");
    const stack = [
      "Error: boom",
      "    at fetchTax (node:internal/deps/undici:1:1)",
      "    at Object.wrap (/app/node_modules/lib/index.js:3:9)",
      `    at runAttempt (${own}:200:12)`,
      "    at async quoteTax (file:///app/src/tax.ts:11:9)",
      "    at async Promise.all (index 0)",
    ].join("\n");
    expect(parseStack(stack)).toHaveLength(4);
    expect(topUserFrame(stack, cwd)).toEqual({ fn: "quoteTax", file: "src/tax.ts", line: 11, column: 9 });
    expect(topUserFrame("Error: x\n    at node:internal/x:1:1", cwd)).toBeNull();
    expect(topUserFrame(undefined, cwd)).toBeNull();
    expect(topUserFrame("    at /elsewhere/job.js:4:2", cwd)).toMatchObject({
      file: "/elsewhere/job.js",
      fn: null,
    });
  });

  it("names the user's frame by file and line, without V8's inferred names that read like API names", () => {
    const cwd = "/app";
    const at = (fn: string) => `Error: x\n    at ${fn} (file:///app/src/flows.ts:12:5)`;
    // An arrow passed to ctx.step("x", fn, { retries }) is named after the options object.
    expect(frameText(topUserFrame(at("ctx.step.retries"), cwd)!)).toBe("src/flows.ts:12");
    expect(frameText(topUserFrame(at("async c.step.timeout"), cwd)!)).toBe("src/flows.ts:12");
    expect(frameText(topUserFrame(at("Object.<anonymous>"), cwd)!)).toBe("src/flows.ts:12");
    // Real names stay: a function, a class's method, a method of an object literal.
    expect(frameText(topUserFrame(at("async quoteTax"), cwd)!)).toBe("src/flows.ts:12 (quoteTax)");
    expect(frameText(topUserFrame(at("TaxClient.quote"), cwd)!)).toBe("src/flows.ts:12 (TaxClient.quote)");
    expect(frameText(topUserFrame(at("Object.run"), cwd)!)).toBe("src/flows.ts:12 (run)");
  });
});

it("spans read as people say them", () => {
  expect([250, 4200, 256_000, 720_000, 3 * 3_600_000 + 300_000, 26 * 3_600_000, 1e15].map(span)).toEqual([
    "250 ms",
    "4.2 s",
    "256 s",
    "12 min",
    "3 h 5 min",
    "1 d 2 h",
    "31,688 years",
  ]);
  // Just under a unit rounds up into it, never "6 d 24 h" or "2 h 60 min".
  const DAY = 86_400_000;
  expect([7 * DAY - 5, 70 * DAY - 5, 3 * 3_600_000 - 5, 3_600_000 - 5, DAY - 5].map(span)).toEqual([
    "7 d",
    "70 d",
    "3 h",
    "1 h",
    "1 d",
  ]);
});
