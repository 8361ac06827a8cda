// Durations as people write them: 500, "500ms", "10s", "10m", "3d", "1h30m".

import { InvalidInputError } from "../errors.js";
import type { Duration } from "../workflow.js";

export type { Duration };

const UNITS: Record<string, number> = {
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
};
const PART = /(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)/gy;

/** Parses a duration to milliseconds, or throws an error naming the value and the accepted forms. */
export function toMs(value: Duration, what = "duration"): number {
  if (typeof value === "number") {
    if (Number.isFinite(value) && value >= 0) return value;
  } else if (typeof value === "string") {
    const text = value.trim();
    let total = 0;
    let matched = 0;
    PART.lastIndex = 0;
    for (let m = PART.exec(text); m; m = PART.exec(text)) {
      total += Number(m[1]) * UNITS[m[2]!]!;
      matched = PART.lastIndex;
      while (text[matched] === " ") matched++;
      PART.lastIndex = matched;
    }
    if (matched === text.length && text.length > 0) return total;
  }
  if ((typeof value === "number" && value < 0) || (typeof value === "string" && /^\s*-/.test(value)))
    throw new InvalidInputError(
      `Invalid ${what} ${JSON.stringify(value)}: a duration must not be negative; use 0 or more milliseconds (e.g. 1500) or a string like "500ms" or "10s".`,
      { value },
    );
  throw new InvalidInputError(
    `Invalid ${what} ${JSON.stringify(value)}: use milliseconds (e.g. 1500) or a string like "500ms", "10s", "10m", "2h", "3d" or "1h30m".`,
    { value },
  );
}
