// JSON at the engine's edges: what is recorded must read back exactly as it was written.

import { NotSerializableError } from "../errors.js";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

const MAX_DEPTH = 200;

/** Returns why `value` would not survive a JSON round trip, or null when it would. */
function problem(
  value: unknown,
  path: string,
  depth: number,
  seen: Set<object>,
): [string, string, string] | null {
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : [path, String(value), "Use null or a finite number instead."];
    case "undefined":
      return [path, "undefined", "Use null, or leave the property out."];
    case "bigint":
      return [path, "a bigint", "Convert it with String(value) or Number(value)."];
    case "function":
      return [path, "a function", "Record data, not functions."];
    case "symbol":
      return [path, "a symbol", "Use a string instead."];
  }
  if (value === null) return null;
  const obj = value as object;
  if (depth > MAX_DEPTH) return [path, `nested deeper than ${MAX_DEPTH} levels`, "Flatten the value."];
  if (seen.has(obj)) return [path, "a circular reference", "Remove the cycle."];
  if (Array.isArray(obj)) {
    seen.add(obj);
    for (let i = 0; i < obj.length; i++) {
      const p = problem(obj[i], `${path}[${i}]`, depth + 1, seen);
      if (p) return p;
    }
    seen.delete(obj);
    return null;
  }
  const proto = Object.getPrototypeOf(obj);
  if (proto !== Object.prototype && proto !== null) {
    const type = obj instanceof Date ? "a Date" : `an instance of ${proto?.constructor?.name ?? "a class"}`;
    const hint =
      obj instanceof Date
        ? "Record date.toISOString() or date.getTime() instead."
        : obj instanceof Map || obj instanceof Set
          ? "Convert it with Object.fromEntries(map) or [...set]."
          : obj instanceof Error
            ? "Record { name, message } instead, or let it throw."
            : "Record a plain object with its data instead.";
    return [path, type, hint];
  }
  seen.add(obj);
  for (const key of Object.keys(obj)) {
    const v = (obj as Record<string, unknown>)[key];
    if (v === undefined) continue; // dropped by JSON, as JavaScript users expect
    const p = problem(v, `${path}.${key}`, depth + 1, seen);
    if (p) return p;
  }
  seen.delete(obj);
  return null;
}

/**
 * Serialises a value to record, refusing anything that would not read back the same.
 * `undefined` at the top encodes as null (callers that care keep the distinction themselves).
 */
export function toJson(value: unknown, what: string): string {
  if (value === undefined) return "null";
  if (typeof value === "string" || typeof value === "boolean") return JSON.stringify(value);
  const p = problem(value, "", 0, new Set());
  if (p) throw new NotSerializableError(what, p[0].replace(/^\./, ""), p[1], p[2]);
  return JSON.stringify(value);
}

export function fromJson<T = unknown>(text: string | null | undefined): T {
  return (text === null || text === undefined ? undefined : JSON.parse(text)) as T;
}

/** A state change: for each top-level key that changed, its value before and after (absent = no key). */
export type StateDiff = Record<string, { before?: JsonValue; after?: JsonValue }>;

/** The top-level difference between two serialised states, or null when equal. */
export function diffState(beforeJson: string, afterJson: string): StateDiff | null {
  if (beforeJson === afterJson) return null;
  const before = JSON.parse(beforeJson) as Record<string, JsonValue>;
  const after = JSON.parse(afterJson) as Record<string, JsonValue>;
  const diff: StateDiff = {};
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const inB = Object.hasOwn(before, key);
    const inA = Object.hasOwn(after, key);
    if (inB && inA && JSON.stringify(before[key]) === JSON.stringify(after[key])) continue;
    const change: { before?: JsonValue; after?: JsonValue } = {};
    if (inB) change.before = before[key]!;
    if (inA) change.after = after[key]!;
    diff[key] = change;
  }
  return Object.keys(diff).length ? diff : null;
}

/** Applies a diff backwards (after → before) onto a state object, in place. */
export function revertDiff(state: Record<string, JsonValue>, diff: StateDiff): void {
  for (const [key, change] of Object.entries(diff)) {
    if ("before" in change) state[key] = change.before!;
    else delete state[key];
  }
}

/** Applies a diff forwards (before → after) onto a state object, in place. */
export function applyDiff(state: Record<string, JsonValue>, diff: StateDiff): void {
  for (const [key, change] of Object.entries(diff)) {
    if ("after" in change) state[key] = change.after!;
    else delete state[key];
  }
}

/** Merges two consecutive diffs into one (the first's befores, the second's afters). */
export function composeDiffs(first: StateDiff, second: StateDiff): StateDiff {
  const out: StateDiff = { ...first };
  for (const [key, change] of Object.entries(second)) {
    const prev = out[key];
    const merged: { before?: JsonValue; after?: JsonValue } = {};
    if (prev) {
      if ("before" in prev) merged.before = prev.before!;
    } else if ("before" in change) merged.before = change.before!;
    if ("after" in change) merged.after = change.after!;
    out[key] = merged;
  }
  return out;
}
