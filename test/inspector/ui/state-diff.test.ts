// The state before and after an entry: changes as JSON Pointer paths.

import { describe, expect, test } from "vitest";
import { diff } from "../../../src/inspector/static/state-diff.js";

describe("diff", () => {
  test("added, removed and changed values by path, nested objects walked, same-length arrays item by item", () => {
    const before = { total: 10, items: [1, 2], owner: { name: "ann", team: "a" }, old: true };
    const after = { total: 12, items: [1, 3], owner: { name: "ann", team: "b" }, fresh: "yes" };
    expect(diff(before, after)).toEqual([
      { path: "/total", op: "changed", before: 10, after: 12 },
      { path: "/items/1", op: "changed", before: 2, after: 3 },
      { path: "/owner/team", op: "changed", before: "a", after: "b" },
      { path: "/old", op: "removed", before: true },
      { path: "/fresh", op: "added", after: "yes" },
    ]);
  });

  test("arrays of another length change as a whole; path segments escape ~ and /", () => {
    expect(diff({ list: [1] }, { list: [1, 2] })).toEqual([
      { path: "/list", op: "changed", before: [1], after: [1, 2] },
    ]);
    expect(diff({}, { "a/b~c": 1 })).toEqual([{ path: "/a~1b~0c", op: "added", after: 1 }]);
    expect(diff(1, 2)).toEqual([{ path: "/", op: "changed", before: 1, after: 2 }]);
    expect(diff({ same: [1, { x: 2 }] }, { same: [1, { x: 2 }] })).toEqual([]);
  });

  test("keys named like Object's own members ('constructor', 'toString') are added and removed like any other", () => {
    expect(diff({}, { constructor: "c", toString: 1 })).toEqual([
      { path: "/constructor", op: "added", after: "c" },
      { path: "/toString", op: "added", after: 1 },
    ]);
    expect(diff({ constructor: "c" }, {})).toEqual([{ path: "/constructor", op: "removed", before: "c" }]);
  });
});
