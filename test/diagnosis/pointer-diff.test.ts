// The bounded JSON Pointer diff compare_runs and diagnose_run rest on, and the dotted paths they print.

import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { dotted, pointerDiff } from "../../src/diagnosis/pointer-diff.js";
import { nested } from "../helpers.js";

/** The value at an RFC 6901 pointer (undefined when absent), to check every change against its inputs. */
function at(value: unknown, pointer: string): unknown {
  let cur = value;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (cur === null || typeof cur !== "object" || !Object.hasOwn(cur, key)) return undefined;
    cur = (cur as Record<string, unknown>)[key];
  }
  return cur;
}

describe("pointerDiff", () => {
  test("names each differing leaf by pointer with both values, absent keys left out", () => {
    const a = { customer: { name: "Ann", email: "ann@example.com" }, items: [1, 2, 3], note: "x" };
    const b = { customer: { name: "Ann", email: null }, items: [1, 5], extra: true, note: "x" };
    expect(pointerDiff(a, b)).toEqual({
      changes: [
        { pointer: "/customer/email", a: "ann@example.com", b: null },
        { pointer: "/items/1", a: 2, b: 5 },
        { pointer: "/items/2", a: 3 },
        { pointer: "/extra", b: true },
      ],
      total: 4,
      more: false,
    });
  });

  test("equal values have no changes; different shapes differ whole; the root is the empty pointer", () => {
    expect(pointerDiff({ a: [1, { b: null }] }, { a: [1, { b: null }] })).toEqual({
      changes: [],
      total: 0,
      more: false,
    });
    expect(pointerDiff({ a: [1] }, { a: { 0: 1 } }).changes).toEqual([
      { pointer: "/a", a: [1], b: { 0: 1 } },
    ]);
    expect(pointerDiff(null, { a: 1 }).changes).toEqual([{ pointer: "", a: null, b: { a: 1 } }]);
    expect(pointerDiff(undefined, 3).changes).toEqual([{ pointer: "", b: 3 }]);
    expect(pointerDiff(undefined, undefined).total).toBe(0);
  });

  test("escapes ~ and / in keys as RFC 6901 says", () => {
    expect(pointerDiff({ "a/b": 1, "m~n": 1 }, { "a/b": 2, "m~n": 2 }).changes.map((c) => c.pointer)).toEqual(
      ["/a~1b", "/m~0n"],
    );
  });

  test("keeps `limit` changes and stops counting at `countUpTo`", () => {
    const a = Array.from({ length: 100_000 }, (_, i) => i);
    const b = a.map((i) => -i - 1);
    const d = pointerDiff(a, b, { limit: 3, countUpTo: 1000 });
    expect(d.changes.map((c) => c.pointer)).toEqual(["/0", "/1", "/2"]);
    expect(d).toMatchObject({ total: 1000, more: true });
    const all = pointerDiff(a.slice(0, 20), b.slice(0, 20), { limit: 3 });
    expect(all).toMatchObject({ total: 20, more: false });
  });

  test("walks a value nested far past the call stack without recursion", () => {
    const d = pointerDiff(nested(50_000), { ...(nested(50_000) as object), more: 1 });
    expect(d.changes).toEqual([{ pointer: "/more", b: 1 }]);
  });

  test("property: every change holds the values found at its pointer, and equal values never differ", () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (x, y) => {
        const d = pointerDiff(x, y, { limit: 1_000_000, countUpTo: 1_000_000 });
        for (const c of d.changes) {
          expect(c.a).toEqual(at(x, c.pointer));
          expect(c.b).toEqual(at(y, c.pointer));
          expect(c.a).not.toEqual(c.b);
        }
        expect(d.total === 0).toBe(JSON.stringify(x) === JSON.stringify(y));
        expect(pointerDiff(x, structuredClone(x)).total).toBe(0);
      }),
    );
  });
});

describe("dotted", () => {
  test("reads a pointer as a path under a root name", () => {
    expect(dotted("input", "/customer/email")).toBe("input.customer.email");
    expect(dotted("input", "/items/0/sku")).toBe("input.items[0].sku");
    expect(dotted("state", "/a~1b/c d")).toBe('state["a/b"]["c d"]');
    expect(dotted("input", "")).toBe("input");
  });
});
