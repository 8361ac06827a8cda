// JSON at the engine's edges: what is recorded must read back exactly as it was written.

import { NotSerializableError } from "../errors.js";
import { checkDepth } from "./depth.js";

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** Why a value would not survive a JSON round trip: where (keys and indexes, innermost first), what, the fix. */
interface Problem {
  at: Array<string | number>;
  what: string;
  hint: string;
}

const found = (what: string, hint: string): Problem => ({ at: [], what, hint });

/**
 * Returns why `value` would not survive a JSON round trip, or null when it would. The path is collected on
 * the way back from a problem, so a value that has none allocates nothing but the cycle check.
 */
function problem(value: unknown, seen: Set<object>): Problem | null {
  switch (typeof value) {
    case "string":
    case "boolean":
      return null;
    case "number":
      return Number.isFinite(value) ? null : found(String(value), "Use null or a finite number instead.");
    case "undefined":
      return found("undefined", "Use null, or leave the property out.");
    case "bigint":
      return found("a bigint", "Convert it with String(value) or Number(value).");
    case "function":
      return found("a function", "Record data, not functions.");
    case "symbol":
      return found("a symbol", "Use a string instead.");
  }
  if (value === null) return null;
  const obj = value as object;
  if (seen.has(obj)) return found("a circular reference", "Remove the cycle.");
  if (Array.isArray(obj)) {
    seen.add(obj);
    for (let i = 0; i < obj.length; i++) {
      const p = problem(obj[i], seen);
      if (p) {
        p.at.push(i);
        return p;
      }
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
    return found(type, hint);
  }
  seen.add(obj);
  for (const key of Object.keys(obj)) {
    const v = (obj as Record<string, unknown>)[key];
    if (v === undefined) continue; // dropped by JSON, as JavaScript users expect
    const p = problem(v, seen);
    if (p) {
      p.at.push(key);
      return p;
    }
  }
  seen.delete(obj);
  return null;
}

/** A problem's path as messages show it: `items[2].price` (nothing at the top). */
function problemPath(p: Problem): string {
  let path = "";
  for (let i = p.at.length - 1; i >= 0; i--) {
    const k = p.at[i]!;
    path += typeof k === "number" ? `[${k}]` : `.${k}`;
  }
  return path.replace(/^\./, "");
}

/**
 * Serialises a value to record, refusing anything that would not read back the same.
 * `undefined` at the top encodes as null (callers that care keep the distinction themselves).
 */
export function toJson(value: unknown, what: string): string {
  if (value === undefined) return "null";
  if (typeof value === "string" || typeof value === "boolean" || value === null) return JSON.stringify(value);
  if (typeof value === "number" && Number.isFinite(value)) return String(value);
  // Iterative, before the recursive walks below (and JSON.stringify): the depth bounds their recursion.
  checkDepth(value, what);
  const p = problem(value, new Set());
  if (p) throw new NotSerializableError(what, problemPath(p), p.what, p.hint);
  return JSON.stringify(value);
}

export function fromJson<T = unknown>(text: string | null | undefined): T {
  return (text === null || text === undefined ? undefined : JSON.parse(text)) as T;
}

/**
 * A state change: for each JSON Pointer path (RFC 6901, e.g. "/sent/email") whose value changed, the
 * value before and after (absent = no such key). Plain objects are compared key by key, so two steps
 * changing different keys of one object each record (and commit) only their own key; arrays and other
 * values are compared whole. Paths within one diff never nest.
 */
export type StateDiff = Record<string, { before?: JsonValue; after?: JsonValue }>;

type JsonObject = { [key: string]: JsonValue };

function isObject(v: unknown): v is JsonObject {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

const escapeKey = (k: string) => k.replaceAll("~", "~0").replaceAll("/", "~1");
const unescapeKey = (k: string) => k.replaceAll("~1", "/").replaceAll("~0", "~");

function segments(pointer: string): string[] {
  return pointer.split("/").slice(1).map(unescapeKey);
}

function walk(before: JsonObject, after: JsonObject, path: string, diff: StateDiff): void {
  for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
    const p = `${path}/${escapeKey(key)}`;
    const inB = Object.hasOwn(before, key);
    const inA = Object.hasOwn(after, key);
    const b = before[key];
    const a = after[key];
    if (inB && inA) {
      if (isObject(b) && isObject(a)) walk(b, a, p, diff);
      else if (JSON.stringify(b) !== JSON.stringify(a)) diff[p] = { before: b!, after: a! };
    } else if (inB) diff[p] = { before: b! };
    else diff[p] = { after: a! };
  }
}

/** The difference between two serialised states, or null when equal. */
export function diffState(beforeJson: string, afterJson: string): StateDiff | null {
  if (beforeJson === afterJson) return null;
  const before = JSON.parse(beforeJson) as unknown;
  const after = JSON.parse(afterJson) as unknown;
  const diff: StateDiff = {};
  if (isObject(before) && isObject(after)) walk(before, after, "", diff);
  else diff[""] = { before: before as JsonValue, after: after as JsonValue };
  return Object.keys(diff).length ? diff : null;
}

/** The value at a pointer, or undefined when absent. */
export function valueAt(state: JsonValue, pointer: string): JsonValue | undefined {
  let cur: JsonValue | undefined = state;
  for (const key of segments(pointer)) {
    if (!isObject(cur) || !Object.hasOwn(cur, key)) return undefined;
    cur = cur[key];
  }
  return cur;
}

/** Sets (or, with `present` false, deletes) the value at a pointer, creating missing parents. */
function setAt(state: JsonObject, pointer: string, present: boolean, value: JsonValue | undefined): void {
  const keys = segments(pointer);
  let cur: JsonObject = state;
  for (const key of keys.slice(0, -1)) {
    const next = cur[key];
    if (!isObject(next)) {
      if (!present) return;
      cur[key] = {};
    }
    cur = cur[key] as JsonObject;
  }
  const last = keys.at(-1)!;
  if (present) cur[last] = value!;
  else delete cur[last];
}

/** Applies a diff backwards (after → before) onto a state object, in place. */
export function revertDiff(state: JsonObject, diff: StateDiff): void {
  for (const [pointer, change] of Object.entries(diff))
    setAt(state, pointer, "before" in change, change.before);
}

/** Applies a diff forwards (before → after) onto a state object, in place. */
export function applyDiff(state: JsonObject, diff: StateDiff): void {
  for (const [pointer, change] of Object.entries(diff))
    setAt(state, pointer, "after" in change, change.after);
}

const within = (path: string, parent: string) => path.startsWith(`${parent}/`);

/** Merges two consecutive diffs into one with the same effect (the first's befores, the second's afters). */
export function composeDiffs(first: StateDiff, second: StateDiff): StateDiff {
  const out: StateDiff = { ...first };
  for (const [p, change] of Object.entries(second)) {
    const exact = out[p];
    if (exact) {
      const merged: { before?: JsonValue; after?: JsonValue } = {};
      if ("before" in exact) merged.before = exact.before!;
      if ("after" in change) merged.after = change.after!;
      out[p] = merged;
      continue;
    }
    const ancestor = Object.keys(out).find((q) => within(p, q));
    if (ancestor) {
      // The first diff replaced a parent; fold this change into that parent's value after.
      const holder = out[ancestor]!;
      if (isObject(holder.after)) {
        const after = JSON.parse(JSON.stringify(holder.after)) as JsonObject;
        setAt(after, p.slice(ancestor.length), "after" in change, change.after);
        out[ancestor] = { ...holder, after };
      }
      continue;
    }
    const nested = Object.keys(out).filter((q) => within(q, p));
    const merged: { before?: JsonValue; after?: JsonValue } = {};
    if (nested.length && isObject(change.before)) {
      // The second diff replaced a parent whose children the first had changed: rebuild its value before both.
      const before = JSON.parse(JSON.stringify(change.before)) as JsonObject;
      for (const q of nested) {
        const c = out[q]!;
        setAt(before, q.slice(p.length), "before" in c, c.before);
        delete out[q];
      }
      merged.before = before;
    } else if ("before" in change) merged.before = change.before!;
    if ("after" in change) merged.after = change.after!;
    out[p] = merged;
  }
  return out;
}
