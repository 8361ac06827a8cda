import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { applyDiff, composeDiffs, diffState, type JsonValue, revertDiff } from "../../src/engine/json.js";

const state = fc.dictionary(
  fc.constantFrom("a", "b", "c", "x/y", "t~"),
  fc.oneof(
    fc.integer(),
    fc.string(),
    fc.constant(null),
    fc.array(fc.integer(), { maxLength: 3 }),
    fc.dictionary(
      fc.constantFrom("a", "b", "c"),
      fc.oneof(fc.integer(), fc.dictionary(fc.constantFrom("p", "q"), fc.integer())),
    ),
  ),
) as fc.Arbitrary<Record<string, JsonValue>>;

const clone = <T>(v: T): T => JSON.parse(JSON.stringify(v)) as T;

describe("state diffs", () => {
  it("applying a diff turns before into after, and reverting turns it back", () => {
    fc.assert(
      fc.property(state, state, (before, after) => {
        const diff = diffState(JSON.stringify(before), JSON.stringify(after)) ?? {};
        const forward = clone(before);
        applyDiff(forward, diff);
        expect(forward).toEqual(after);
        const back = clone(after);
        revertDiff(back, diff);
        expect(back).toEqual(before);
      }),
    );
  });

  it("composing consecutive diffs has the effect of both", () => {
    fc.assert(
      fc.property(state, state, state, (s1, s2, s3) => {
        const d1 = diffState(JSON.stringify(s1), JSON.stringify(s2)) ?? {};
        const d2 = diffState(JSON.stringify(s2), JSON.stringify(s3)) ?? {};
        const both = composeDiffs(d1, d2);
        const forward = clone(s1);
        applyDiff(forward, both);
        expect(forward).toEqual(s3);
        const back = clone(s3);
        revertDiff(back, both);
        expect(back).toEqual(s1);
      }),
    );
  });
});
