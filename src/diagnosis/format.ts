// Wording shared by every rule: times, spans, values cut short, error lines.

import type { ErrorInfo } from "../engine/error-info.js";

/** ISO time, or "an invalid time" for values a Date cannot hold. */
export function iso(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return "never";
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

/** A JSON value on one line, cut to `max` characters. */
export function brief(value: unknown, max = 120): string {
  let json: string;
  try {
    json = JSON.stringify(value) ?? "undefined";
  } catch {
    json = String(value);
  }
  return json.length > max ? `${json.slice(0, max)}…` : json;
}

/** A string cut to `max` characters. */
export function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}…` : text;
}

/** "Name: message", cut to `max` characters. */
export function errorLine(error: Pick<ErrorInfo, "name" | "message"> | null | undefined, max = 200): string {
  if (!error) return "no error recorded";
  return cut(`${error.name}: ${error.message}`, max);
}

export { causeOf } from "../failure-signature.js";

/** "1 attempt", "4 attempts". */
export function plural(n: number, word: string): string {
  if (n === 1) return `${n} ${word}`;
  if (/[^aeiou]y$/.test(word)) return `${n} ${word.slice(0, -1)}ies`;
  return `${n} ${word}${/(s|x|ch|sh)$/.test(word) ? "es" : "s"}`;
}
