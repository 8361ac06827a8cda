// The differences between two JSON values as JSON Pointers (RFC 6901) with both values, bounded: at most
// `limit` changes are kept and at most `countUpTo` counted, so a hostile or huge pair costs one walk at most.
//
// Plain objects are compared key by key and arrays index by index (a value missing on one side is absent,
// not null); anything else is compared whole. Hand-written rather than a library: the JSON diff libraries
// answer with key arrays or patches without the old value, and none stops early.

/** One place where two values differ: `a` and `b` are the values there (absent: no such key or index). */
export interface PointerChange {
  pointer: string;
  a?: unknown;
  b?: unknown;
}

/** The changes kept (document order) and how many there are (`more`: counting stopped at `countUpTo`). */
export interface PointerDiff {
  changes: PointerChange[];
  total: number;
  more: boolean;
}

export interface PointerDiffOptions {
  /** Changes kept (default 50). */
  limit?: number;
  /** Changes counted before the walk stops (default 10,000). */
  countUpTo?: number;
}

const escapeKey = (k: string) => k.replaceAll("~", "~0").replaceAll("/", "~1");

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** The differences between `a` and `b` (JSON values; undefined stands for absent). */
export function pointerDiff(a: unknown, b: unknown, options: PointerDiffOptions = {}): PointerDiff {
  const limit = options.limit ?? 50;
  const countUpTo = options.countUpTo ?? 10_000;
  const changes: PointerChange[] = [];
  let total = 0;
  // Iterative and in document order: a stack of [pointer, a, b, present in a, present in b].
  const stack: Array<[string, unknown, unknown, boolean, boolean]> = [
    ["", a, b, a !== undefined, b !== undefined],
  ];
  while (stack.length) {
    const [pointer, x, y, inX, inY] = stack.pop()!;
    if (inX && inY && x === y) continue;
    if (inX && inY && isObject(x) && isObject(y)) {
      const keys = [...Object.keys(x), ...Object.keys(y).filter((k) => !Object.hasOwn(x, k))];
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i]!;
        stack.push([`${pointer}/${escapeKey(k)}`, x[k], y[k], Object.hasOwn(x, k), Object.hasOwn(y, k)]);
      }
      continue;
    }
    if (inX && inY && Array.isArray(x) && Array.isArray(y)) {
      for (let i = Math.max(x.length, y.length) - 1; i >= 0; i--)
        stack.push([`${pointer}/${i}`, x[i], y[i], i < x.length, i < y.length]);
      continue;
    }
    if (!inX && !inY) continue;
    total++;
    if (changes.length < limit) {
      const change: PointerChange = { pointer };
      if (inX) change.a = x;
      if (inY) change.b = y;
      changes.push(change);
    }
    if (total >= countUpTo && stack.length) return { changes, total, more: true };
  }
  return { changes, total, more: false };
}

/**
 * A pointer as a person reads a path into a value, under a root name: "/customer/email" under "input" is
 * "input.customer.email", "/items/0" is "input.items[0]", an odd key is quoted: input["a.b"].
 */
export function dotted(root: string, pointer: string): string {
  if (pointer === "") return root;
  let out = root;
  for (const raw of pointer.split("/").slice(1)) {
    const key = raw.replaceAll("~1", "/").replaceAll("~0", "~");
    if (/^\d+$/.test(key)) out += `[${key}]`;
    else if (/^[A-Za-z_$][\w$]*$/.test(key)) out += `.${key}`;
    else out += `[${JSON.stringify(key)}]`;
  }
  return out;
}
