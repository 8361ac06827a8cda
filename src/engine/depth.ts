// How deeply JSON values may nest: checked without recursion, before anything recursive walks a value
// (schema validation, serialisation, diffs, answers), so a hostile body cannot overflow the stack.

import { ValueTooDeepError } from "../errors.js";

/** Most levels of nested objects and arrays in a message body, input, output, state or action argument. */
export const MAX_DEPTH = 64;

/** An object or array waiting to be visited, with how it was reached (its path is built only if it is too deep). */
interface Visit {
  value: object;
  depth: number;
  parent: Visit | null;
  key: string | number;
}

function pathOf(visit: Visit): string {
  let path = "";
  for (let v: Visit | null = visit; v?.parent; v = v.parent)
    path = typeof v.key === "number" ? `[${v.key}]${path}` : `.${v.key}${path}`;
  return path;
}

/**
 * The path to the first object or array nested deeper than `limit` levels (`{"a":[1]}` has two), or null.
 * Iterative, and it stops at the first too-deep value, so it costs at most one visit per value; nothing is
 * allocated for a value that is not an object or an array (outputs are checked on every step).
 */
export function tooDeepAt(value: unknown, limit = MAX_DEPTH): string | null {
  if (typeof value !== "object" || value === null) return null;
  const stack: Visit[] = [{ value, depth: 1, parent: null, key: "" }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.depth > limit) return pathOf(top);
    const node = top.value;
    if (Array.isArray(node)) {
      for (let i = 0; i < node.length; i++) {
        const child: unknown = node[i];
        if (typeof child === "object" && child !== null)
          stack.push({ value: child, depth: top.depth + 1, parent: top, key: i });
      }
    } else {
      const keys = Object.keys(node);
      for (let i = 0; i < keys.length; i++) {
        const child: unknown = (node as Record<string, unknown>)[keys[i]!];
        if (typeof child === "object" && child !== null)
          stack.push({ value: child, depth: top.depth + 1, parent: top, key: keys[i]! });
      }
    }
  }
  return null;
}

/** Refuses (INVALID_INPUT) a value nested deeper than MAX_DEPTH levels; `what` names it ("The input of run ..."). */
export function checkDepth(value: unknown, what: string): void {
  const at = tooDeepAt(value);
  if (at !== null) throw new ValueTooDeepError(what, MAX_DEPTH, at.replace(/^\./, ""));
}
