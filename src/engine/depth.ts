// How deeply JSON values may nest: checked without recursion, before anything recursive walks a value
// (schema validation, serialisation, diffs, answers), so a hostile body cannot overflow the stack.

import { ValueTooDeepError } from "../errors.js";

/** Most levels of nested objects and arrays in a message body, input, output, state or action argument. */
export const MAX_DEPTH = 64;

/**
 * The path to the first object or array nested deeper than `limit` levels (`{"a":[1]}` has two), or null.
 * Iterative, and it stops at the first too-deep value, so it costs at most one visit per value.
 */
export function tooDeepAt(value: unknown, limit = MAX_DEPTH): string | null {
  if (typeof value !== "object" || value === null) return null;
  const stack: Array<{ value: object; depth: number; path: string }> = [{ value, depth: 1, path: "" }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.depth > limit) return top.path;
    const children = Array.isArray(top.value)
      ? top.value.map((v, i) => [`${top.path}[${i}]`, v] as const)
      : Object.keys(top.value).map(
          (k) => [`${top.path}.${k}`, (top.value as Record<string, unknown>)[k]] as const,
        );
    for (const [path, child] of children) {
      if (typeof child === "object" && child !== null)
        stack.push({ value: child, depth: top.depth + 1, path });
    }
  }
  return null;
}

/** Refuses (INVALID_INPUT) a value nested deeper than MAX_DEPTH levels; `what` names it ("The input of run ..."). */
export function checkDepth(value: unknown, what: string): void {
  const at = tooDeepAt(value);
  if (at !== null) throw new ValueTooDeepError(what, MAX_DEPTH, at.replace(/^\./, ""));
}
