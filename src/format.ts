// Wording shared by every answer Waymark writes (MCP tools, diagnoses, the CLI): times, values and errors
// cut short, counts. One behaviour each: an absent time or error is null, and prose says what it means.

import type { ErrorInfo } from "./engine/error-info.js";

/** ISO time of `ms`; null for no time; "an invalid time (…)" for a value a Date cannot hold (never throws). */
export function iso(ms: number): string;
export function iso(ms: number | null | undefined): string | null;
export function iso(ms: number | null | undefined): string | null {
  if (ms === null || ms === undefined) return null;
  const d = new Date(ms);
  return Number.isNaN(d.getTime()) ? `an invalid time (${ms})` : d.toISOString();
}

/** A span of time as people say it: "250 ms", "4.2 s", "256 s", "12 min", "3 h 5 min", "2 d 4 h", "31,000 years". */
export function span(ms: number): string {
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(a)} ms`;
  if (a < 600_000) return `${(a / 1000).toFixed(a < 10_000 ? 1 : 0)} s`;
  // Round to the smallest unit shown first, then split: 6 d 23 h 59 min reads "7 d", not "6 d 24 h".
  if (a < 3_570_000) return `${Math.round(a / 60_000)} min`;
  if (a < 86_370_000) {
    const minutes = Math.round(a / 60_000);
    const h = Math.floor(minutes / 60);
    const m = minutes % 60;
    return m ? `${h} h ${m} min` : `${h} h`;
  }
  const days = a / 86_400_000;
  if (days < 365) {
    const hours = Math.round(a / 3_600_000);
    const d = Math.floor(hours / 24);
    const h = hours % 24;
    return h ? `${d} d ${h} h` : `${d} d`;
  }
  return `${Math.round(days / 365.25).toLocaleString("en-US")} years`;
}

/** A string cut to `max` characters, "…" marking the cut. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** A JSON value on one line, cut to `max` characters (a value JSON cannot hold is shown as String(value)). */
export function brief(value: unknown, max = 160): string {
  let json: string;
  try {
    json = JSON.stringify(value) ?? "undefined";
  } catch {
    json = String(value);
  }
  return cut(json, max);
}

/** "Name: message" of a recorded error, cut to `max` characters; null for no error. */
export function errorLine(error: Pick<ErrorInfo, "name" | "message">, max?: number): string;
export function errorLine(
  error: Pick<ErrorInfo, "name" | "message"> | null | undefined,
  max?: number,
): string | null;
export function errorLine(
  error: Pick<ErrorInfo, "name" | "message"> | null | undefined,
  max = 300,
): string | null {
  return error ? cut(`${error.name}: ${error.message}`, max) : null;
}

/** A name or text from a request as a message shows it: quoted, cut at `max` characters (it may be hostile). */
export function quote(value: string, max = 80): string {
  return JSON.stringify(value.length > max ? `${value.slice(0, max)}...` : value);
}

/** "1 attempt", "4 attempts", "2 entries". */
export function plural(n: number, word: string): string {
  if (n === 1) return `${n} ${word}`;
  if (/[^aeiou]y$/.test(word)) return `${n} ${word.slice(0, -1)}ies`;
  return `${n} ${word}${/(s|x|ch|sh)$/.test(word) ? "es" : "s"}`;
}

/** Queue names an answer lists in full before "and N more queues". */
export const SHOWN_QUEUES = 10;

/** '"approve" or "reject"'; '"a", "b", … "j" and 90 more queues' past `max` names (each cut to 80). */
export function queueNames(queues: readonly string[], max = SHOWN_QUEUES): string {
  const shown = queues.slice(0, max).map((q) => quote(q));
  if (queues.length > max) return `${shown.join(", ")} and ${plural(queues.length - max, "more queue")}`;
  if (shown.length < 2) return shown.join("");
  return `${shown.slice(0, -1).join(", ")} or ${shown.at(-1)}`;
}
