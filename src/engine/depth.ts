// How deeply JSON values may nest: checked without recursion, before anything recursive walks a value
// (schema validation, serialisation, diffs, answers), so a hostile body cannot overflow the stack.

import { NotSerializableError, ValueTooDeepError } from "../errors.js";

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
  const visit = tooDeepVisit(value, limit);
  return visit ? pathOf(visit) : null;
}

/** The visit of the first object or array nested deeper than `limit` levels (see tooDeepAt), or null. */
function tooDeepVisit(value: unknown, limit: number): Visit | null {
  if (typeof value !== "object" || value === null) return null;
  const stack: Visit[] = [{ value, depth: 1, parent: null, key: "" }];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    if (top.depth > limit) return top;
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

/**
 * On the way to a value too deep, the first object or array that is one of its own ancestors (a cycle makes
 * every value "too deep"), or null. Walked only once a value was found too deep.
 */
function cycleOn(visit: Visit): Visit | null {
  const chain: Visit[] = [];
  for (let v: Visit | null = visit; v; v = v.parent) chain.push(v);
  const passed = new Set<object>();
  for (let i = chain.length - 1; i >= 0; i--) {
    if (passed.has(chain[i]!.value)) return chain[i]!;
    passed.add(chain[i]!.value);
  }
  return null;
}

/**
 * Refuses (INVALID_INPUT) a value nested deeper than MAX_DEPTH levels, or (NOT_SERIALIZABLE) one that holds
 * itself; `what` names it ("The input of run ..."). */
export function checkDepth(value: unknown, what: string): void {
  const visit = tooDeepVisit(value, MAX_DEPTH);
  if (visit === null) return;
  const cycle = cycleOn(visit);
  if (cycle !== null) {
    throw new NotSerializableError(
      what,
      pathOf(cycle).replace(/^\./, ""),
      "a circular reference",
      "Remove the cycle.",
    );
  }
  throw new ValueTooDeepError(what, MAX_DEPTH, pathOf(visit).replace(/^\./, ""));
}
