// Schedules as setup({ schedules }) declares them: checked at setup, and what each one's next firing is.
// Cron expressions and time zones (daylight-saving changes included) are croner's; `every` intervals are
// aligned on the epoch (every: "15m" fires at :00, :15, :30 and :45 UTC), so every process agrees on them.

import { createRequire } from "node:module";
import type { Cron } from "croner";
import { InvalidScheduleError } from "../errors.js";
import type { InputOf, WorkflowEntry } from "../workflow.js";
import { type Duration, toMs } from "./duration.js";
import { nameProblem } from "./history.js";

/** What a firing does while the schedule's previous run is unfinished: skip it (recorded), or start it anyway. */
export type ScheduleOverlap = "skip" | "allow";
/** Firings missed while no process ran: the most recent one, every one, or none. */
export type ScheduleCatchUp = "latest" | "all" | "none";

/** One schedule of setup({ schedules }): which workflow to start, when, and with what input. */
export interface ScheduleConfig<W extends string = string, I = unknown> {
  workflow: W;
  /** A cron expression (5 fields, or 6 with seconds first), read by croner. Give `cron` or `every`. */
  cron?: string;
  /** An IANA time zone for `cron` (default UTC), e.g. "Europe/Berlin". */
  timezone?: string;
  /** An interval ("15m", "1h", 60000), aligned on the epoch. Give `cron` or `every`. */
  every?: Duration;
  /** The run's input, or a function of the firing's due time that returns it. */
  input?: I | ((at: Date) => I);
  /** Default "skip": a firing while the previous run of this schedule is unfinished is skipped and recorded. */
  overlap?: ScheduleOverlap;
  /** Default "latest": after downtime, one run for the most recent missed firing. */
  catchUp?: ScheduleCatchUp;
}

/** The schedules object of setup(), typed by the registry's workflows. */
export type SchedulesConfig<U extends Record<string, WorkflowEntry>> = Record<
  string,
  { [N in keyof U & string]: ScheduleConfig<N, InputOf<U[N]>> }[keyof U & string]
>;

/** A schedule checked at setup. */
export interface ScheduleDef {
  name: string;
  workflow: string;
  overlap: ScheduleOverlap;
  catchUp: ScheduleCatchUp;
  /** JSON of when it fires ({ cron, timezone } or { every }) and its policies, stored so any process can show it. */
  spec: string;
  /** The first firing strictly after `after` (ms), or null when there is none. */
  next(after: number): number | null;
  /** The run's input for the firing due at `at`. */
  input(at: Date): unknown;
}

const require = createRequire(import.meta.url);
let CronClass: typeof Cron | undefined;
/** croner, loaded when a cron schedule is first read (a process without one never loads it). */
function cronClass(): typeof Cron {
  CronClass ??= (require("croner") as { Cron: typeof Cron }).Cron;
  return CronClass;
}

/** How late an on-time firing may be with catchUp "none" before it counts as missed (ms). */
export const NONE_GRACE_MS = 60_000;

const OVERLAPS: readonly string[] = ["skip", "allow"];
const CATCH_UPS: readonly string[] = ["latest", "all", "none"];
const KNOWN = new Set(["workflow", "cron", "timezone", "every", "input", "overlap", "catchUp"]);

/** Checks setup()'s schedules against its workflows; throws InvalidScheduleError naming the fix. */
export function defineSchedules(config: unknown, workflows: ReadonlySet<string>): Map<string, ScheduleDef> {
  const out = new Map<string, ScheduleDef>();
  if (config === undefined) return out;
  if (typeof config !== "object" || config === null || Array.isArray(config)) {
    throw new InvalidScheduleError(
      "",
      'setup({ schedules }) takes an object of schedules by name, e.g. { nightly: { workflow: "report", cron: "0 3 * * *" } }.',
    );
  }
  for (const [name, raw] of Object.entries(config)) out.set(name, defineOne(name, raw, workflows));
  return out;
}

function defineOne(name: string, raw: unknown, workflows: ReadonlySet<string>): ScheduleDef {
  const fail = (why: string): never => {
    throw new InvalidScheduleError(name, `Schedule ${JSON.stringify(name)}: ${why}`);
  };
  const problem = nameProblem(name);
  if (problem) fail(`the name is invalid: ${problem}`);
  if (name.includes("@")) fail('the name cannot contain "@" (a run key is name@due-time); use "-" instead.');
  if (typeof raw !== "object" || raw === null)
    fail('give an object like { workflow: "report", cron: "0 3 * * *" }.');
  const s = raw as ScheduleConfig;
  for (const k of Object.keys(s)) {
    if (!KNOWN.has(k)) fail(`unknown option ${JSON.stringify(k)}; the options are ${[...KNOWN].join(", ")}.`);
  }
  if (typeof s.workflow !== "string" || !workflows.has(s.workflow)) {
    fail(
      `workflow ${JSON.stringify(s.workflow)} is not in setup({ use }); name one of ${[...workflows].map((w) => JSON.stringify(w)).join(", ") || "(none registered)"}.`,
    );
  }
  const overlap = s.overlap ?? "skip";
  if (!OVERLAPS.includes(overlap)) fail(`overlap ${JSON.stringify(overlap)} is not "skip" or "allow".`);
  const catchUp = s.catchUp ?? "latest";
  if (!CATCH_UPS.includes(catchUp))
    fail(`catchUp ${JSON.stringify(catchUp)} is not "latest", "all" or "none".`);
  const hasCron = s.cron !== undefined;
  const hasEvery = s.every !== undefined;
  if (hasCron === hasEvery) {
    fail(
      hasCron
        ? 'give either cron or every, not both (cron: "0 3 * * *" fires at 03:00; every: "15m" every 15 minutes).'
        : 'say when it fires: cron: "0 3 * * *" (a cron expression) or every: "15m" (an interval).',
    );
  }
  const input = typeof s.input === "function" ? (s.input as (at: Date) => unknown) : () => s.input;
  const base = { name, workflow: s.workflow, overlap, catchUp, input } as const;
  if (hasEvery) {
    if (s.timezone !== undefined)
      fail("timezone applies to cron only; an every interval is the same in every zone.");
    let ms = 0;
    try {
      ms = toMs(s.every!, "every interval");
    } catch (err) {
      fail((err as Error).message);
    }
    if (ms < 1000) fail(`every ${JSON.stringify(s.every)} is shorter than a second; use at least "1s".`);
    return {
      ...base,
      spec: JSON.stringify({ every: s.every, ms, overlap, catchUp }),
      next: (after) => (Math.floor(after / ms) + 1) * ms,
    };
  }
  if (typeof s.cron !== "string") fail(`cron must be a string like "0 3 * * *", got ${typeof s.cron}.`);
  const timezone = s.timezone ?? "UTC";
  try {
    new Intl.DateTimeFormat("en", { timeZone: timezone });
  } catch {
    fail(
      `timezone ${JSON.stringify(timezone)} is not an IANA time zone; use a name like "Europe/Berlin", "America/New_York" or "UTC".`,
    );
  }
  let cron: Cron;
  try {
    cron = new (cronClass())(s.cron!, { timezone });
  } catch (err) {
    fail(
      `cron ${JSON.stringify(s.cron)} is invalid (${(err as Error).message}); use 5 fields "minute hour day-of-month month day-of-week", e.g. "0 3 * * *" for 03:00 daily.`,
    );
  }
  return {
    ...base,
    spec: JSON.stringify({ cron: s.cron, timezone, overlap, catchUp }),
    next: (after) => cron.nextRun(new Date(after))?.getTime() ?? null,
  };
}
