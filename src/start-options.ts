// Checks the options of registry.start() and attach() before anything opens: a wrong value gets an error
// naming the option, what it holds and what it takes, instead of an engine that misbehaves later (a lease
// shorter than its renewal lets two processes run one step at once).

import { describe } from "./engine/query-input.js";
import { parseRetention } from "./engine/retention.js";
import { InvalidInputError } from "./errors.js";

/** Shortest lease: renewed every third of it, a lease must outlast ordinary event-loop pauses. */
export const MIN_LEASE_MS = 1000;

type Check = (value: unknown) => string | null;

const wholeNumber =
  (min: number, max: number, why = ""): Check =>
  (v) =>
    typeof v === "number" && Number.isInteger(v) && v >= min && v <= max
      ? null
      : `takes a whole number of milliseconds from ${min.toLocaleString("en")} to ${max.toLocaleString("en")}${why}`;

const CHECKS: Record<string, Check> = {
  database: (v) =>
    (typeof v === "string" && v.length > 0) ||
    (typeof v === "object" && v !== null && typeof (v as { commit?: unknown }).commit === "function")
      ? null
      : 'takes a SQLite file path, ":memory:", a postgres:// URL, or a Store',
  clock: (v) =>
    typeof v === "object" && v !== null && typeof (v as { now?: unknown }).now === "function"
      ? null
      : "takes a Clock (an object with now(); e.g. new FakeClock() in tests)",
  durability: (v) => (v === "normal" || v === "full" ? null : 'takes "normal" (the default) or "full"'),
  leaseMs: wholeNumber(
    MIN_LEASE_MS,
    86_400_000,
    " (a lease is renewed every third of it; a shorter one expires during ordinary pauses and lets another process take a run that is still executing)",
  ),
  pollMs: wholeNumber(5, 86_400_000),
  maxActiveRuns: (v) =>
    typeof v === "number" && Number.isInteger(v) && v >= 0
      ? null
      : "takes a whole number of runs, 0 or more (0: this process executes no run, it only stores and answers)",
  random: (v) => (typeof v === "function" ? null : "takes a function returning numbers in [0, 1)"),
  ownerId: (v) =>
    typeof v === "string" && v.length > 0 && v.length <= 200 && !/[\u0000-\u001f]/.test(v)
      ? null
      : "takes a non-empty string of at most 200 characters without control characters",
  busyTimeoutMs: wholeNumber(0, 3_600_000),
  deployCheck: (v) => (typeof v === "boolean" ? null : "takes true (the default) or false"),
  on: (v) =>
    typeof v === "function"
      ? null
      : "takes a function called with every engine event, e.g. (event) => log(event)",
  retention: (v) => {
    const parsed = parseRetention(v, "retention");
    return "problem" in parsed ? `is wrong: ${parsed.problem as string}` : null;
  },
};

/** Refuses unknown option names and values out of range, naming the option and what it takes. */
export function checkStartOptions(options: unknown, call: string): void {
  if (options === undefined) return;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new InvalidInputError(
      `${call} takes an options object, e.g. { database: "app.db" }; got ${describe(options)}.`,
    );
  }
  for (const [name, value] of Object.entries(options)) {
    const check = CHECKS[name];
    if (!check) {
      throw new InvalidInputError(
        `${call}: unknown option "${name}". Its options are: ${Object.keys(CHECKS).join(", ")}.`,
        { option: name },
      );
    }
    if (value === undefined) continue;
    const problem = check(value);
    if (problem) {
      throw new InvalidInputError(`${call}: option ${name} ${problem}; got ${describe(value)}.`, {
        option: name,
      });
    }
  }
}
