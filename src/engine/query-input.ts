// What a caller's filters, names, keys, times and ids may be before any store is asked, checked here once so
// every store answers the same: PostgreSQL text cannot hold a NUL character, and its BIGINT and INTEGER
// columns take whole numbers in range only (SQLite took them all and matched nothing). Refusals are
// INVALID_INPUT naming the option and saying what it takes.

import { InvalidInputError } from "../errors.js";

/** The largest time a Date holds (±8.64e15 ms, years -271821 to 275760); times outside it mean nothing. */
export const MAX_TIME = 8.64e15;
/** The largest workflow version (a 32-bit integer column). */
export const MAX_VERSION = 2_147_483_647;

/** A short description of a value for an error message. */
export function describe(value: unknown): string {
  if (typeof value === "string")
    return JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value);
  if (value === null || typeof value !== "object") return String(value);
  return Array.isArray(value) ? "an array" : "an object";
}

/** Lone surrogates only: with the u flag a pair is one code point, outside the Cs category. */
const LONE_SURROGATE = /\p{Cs}/u;

/**
 * Why a string cannot be stored and matched as given by every store, or null: a NUL character (PostgreSQL
 * text holds none) or half of a surrogate pair (stored as U+FFFD, so it never matches itself again).
 */
export function textProblem(value: string): string | null {
  if (value.includes("\u0000"))
    return "it contains the NUL character (\\u0000), which no workflow name, key, queue or stored text can hold";
  if (LONE_SURROGATE.test(value))
    return "it contains half of a UTF-16 surrogate pair (it is not well-formed Unicode), which would be stored as U+FFFD and never match itself again";
  return null;
}

/** Refuses a string that no name, key or stored text can hold (see textProblem). */
export function checkText(value: string, what: string): void {
  const problem = textProblem(value);
  if (problem) {
    throw new InvalidInputError(`Invalid ${what} ${describe(value)}: ${problem}. Remove it.`, {
      field: what,
    });
  }
}

/** Refuses a time that is not whole milliseconds within a Date's range. */
export function checkTime(value: number, what: string): void {
  if (!(Number.isSafeInteger(value) && Math.abs(value) <= MAX_TIME)) {
    throw new InvalidInputError(
      `Invalid ${what}: ${describe(value)}; it must be a Date or whole milliseconds since the epoch within a Date's range (at most ±8,640,000,000,000,000, the years -271821 to 275760), e.g. Date.parse("2026-01-31T00:00:00Z").`,
      { field: what },
    );
  }
}

/** Refuses anything but a whole number from `min` to `max`; `means` says what the number is. */
export function checkWhole(value: number, what: string, min: number, max: number, means: string): void {
  if (!(Number.isSafeInteger(value) && value >= min && value <= max)) {
    throw new InvalidInputError(
      `Invalid ${what}: ${describe(value)}; it must be ${means}, a whole number from ${min.toLocaleString("en")} to ${max.toLocaleString("en")}.`,
      { field: what },
    );
  }
}

/**
 * How an option is checked: "string" (no NUL), "boolean", "number" (finite), "time" (a Date or whole ms in a Date's
 * range), "version" (a workflow version, 1 to 2^31-1), "seq" (an entry id to continue after, 0 or more).
 */
export type Expect = "string" | "boolean" | "number" | "time" | "version" | "seq";

/** Refuses option values of the wrong type or out of range, with an error naming the option. */
export function checkOptions(options: object, spec: Record<string, Expect>): void {
  if (typeof options !== "object" || options === null)
    throw new InvalidInputError("Options must be an object.");
  for (const [name, want] of Object.entries(spec)) {
    const v = (options as Record<string, unknown>)[name];
    if (v === undefined) continue;
    const option = `option ${name}`;
    if (want === "string") {
      if (typeof v !== "string")
        throw new InvalidInputError(`Invalid ${option}: ${describe(v)}; it must be a string.`);
      checkText(v, option);
    } else if (want === "boolean") {
      if (typeof v !== "boolean")
        throw new InvalidInputError(`Invalid ${option}: ${describe(v)}; it must be a boolean.`);
    } else if (want === "time") {
      const ms = v instanceof Date ? v.getTime() : v;
      if (typeof ms !== "number" || Number.isNaN(ms))
        throw new InvalidInputError(
          `Invalid ${option}: ${describe(v)}; it must be a Date or milliseconds since the epoch.`,
        );
      checkTime(ms, option);
    } else {
      if (!(typeof v === "number" && Number.isFinite(v)))
        throw new InvalidInputError(`Invalid ${option}: ${describe(v)}; it must be a number.`);
      if (want === "version") checkWhole(v, option, 1, MAX_VERSION, "a workflow version");
      else if (want === "seq")
        checkWhole(v, option, 0, Number.MAX_SAFE_INTEGER, "the id of the entry to continue after");
    }
  }
}

/** Refuses a run key no URL or store can carry: empty, over 512 characters, control characters, "." or "..". */
export function checkRunKey(key: unknown): asserts key is string {
  if (
    typeof key !== "string" ||
    key.length === 0 ||
    key.length > 512 ||
    /[\u0000-\u001f]/.test(key) ||
    textProblem(key) !== null ||
    key === "." ||
    key === ".."
  ) {
    throw new InvalidInputError(
      `Invalid run key ${JSON.stringify(key)}: a key is a non-empty string of at most 512 characters, well-formed Unicode without control characters, and not "." or ".." (those read as path steps in URLs).`,
    );
  }
}
