// Where toJson and the depth check say a value goes wrong: the path of the value (keys and indexes), built
// only once a problem is found (issue 21: they built a path string for every value of every output).

import { expect, test } from "vitest";
import { MAX_DEPTH, tooDeepAt } from "../../src/engine/depth.js";
import { toJson } from "../../src/engine/json.js";

const refused = (value: unknown) => {
  try {
    toJson(value, 'The result of step "s"');
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("toJson accepted the value");
};

test("toJson names the nested value that cannot be recorded, by keys and indexes", () => {
  expect(refused({ items: [{ price: 1 }, { price: 2 }, { price: Number.NaN }] })).toContain(
    "the value at items[2].price is NaN",
  );
  expect(refused([[1], [2, { when: new Date(0) }]])).toMatch(/the value at \[1\]\[1\]\.when is a Date/);
  expect(refused({ a: { b: 10n } })).toMatch(/the value at a\.b is a bigint/);
  expect(refused(() => 1)).toMatch(/the value is a function/);
  const loop: Record<string, unknown> = { list: [] };
  (loop.list as unknown[]).push({ back: loop });
  // A cycle is found by the depth check, which runs first (it bounds the recursive walks), and named as one.
  expect(refused(loop)).toContain("the value at list[0].back is a circular reference. Remove the cycle.");
  const self: unknown[] = [1];
  self.push(self);
  expect(refused({ deep: { list: self } })).toContain("the value at deep.list[1] is a circular reference");
  // A value seen twice without a cycle is fine, and undefined properties are dropped, as JSON does.
  const shared = { n: 1 };
  expect(toJson({ a: shared, b: [shared], c: undefined }, "x")).toBe('{"a":{"n":1},"b":[{"n":1}]}');
});

test("the depth check names the first value past the limit, and accepts one at it", () => {
  const nest = (levels: number, key: string | number) => {
    let v: unknown = {};
    for (let i = 1; i < levels; i++) v = typeof key === "number" ? [v] : { [key]: v };
    return v;
  };
  expect(tooDeepAt(nest(MAX_DEPTH, "a"))).toBeNull();
  expect(tooDeepAt(nest(MAX_DEPTH + 1, "a"))).toBe(".a".repeat(MAX_DEPTH));
  expect(tooDeepAt(nest(MAX_DEPTH + 1, 0))).toBe("[0]".repeat(MAX_DEPTH));
  // Of two branches too deep, the last is visited first.
  const two = { first: nest(MAX_DEPTH, "x"), second: nest(MAX_DEPTH, "y"), flat: [1, "two", null] };
  expect(tooDeepAt(two)).toBe(`.second${".y".repeat(MAX_DEPTH - 1)}`);
  expect(tooDeepAt({ ok: [1, 2, { three: [3] }] })).toBeNull();
  expect(tooDeepAt("text")).toBeNull();
});
