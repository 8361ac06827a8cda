// The size budget of answers: no answer passes MAX_ANSWER_CHARS, errors included; large values are cut
// with a note and a link to the resource that holds them whole.
//
// IMPORTANT: a tool builds its answer at a given `valueLimit`; `fitAnswer` retries with smaller limits
// until the whole result (text + structuredContent + links, as JSON) fits, and cuts the text when even
// the smallest does not; `withinBudget` is the last word on any tool result (the answer guard applies it
// to every result the server sends, the SDK's own errors included).

import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../log.js";

/** Hard ceiling on the characters of one tool result (its JSON), far below 25,000 tokens. */
export const MAX_ANSWER_CHARS = 20_000;

/** Longest message of a JSON-RPC error or an isError result, in characters. */
export const MAX_ERROR_CHARS = 4000;

/** Per-value limits tried in turn, largest first. */
const VALUE_LIMITS = [6000, 3000, 1500, 700, 300, 120];

/** A value replaced because it was too large for an answer. */
export interface Truncated {
  truncated: true;
  /** Characters of the value as JSON. */
  chars: number;
  /** The beginning of the value as JSON. */
  preview: string;
  /** Where to read the whole value (resources/read). */
  resource: string;
}

/** A link to a resource that holds what an answer left out. */
export interface Link {
  uri: string;
  name: string;
  description?: string;
}

/** What a tool returns before the budget is applied. */
export interface Answer<T extends Record<string, unknown>> {
  text: string;
  structured: T;
  links?: Link[];
  /** Set when a value was cut: the budget adds a note to the text. */
  truncated?: boolean;
}

/** Tracks what was cut while an answer is built at one value limit. */
export class Shrinker {
  truncated = false;
  readonly links = new Map<string, Link>();
  constructor(readonly limit: number) {}

  /** The value itself when its JSON fits `limit` characters (or `limit` given), else a Truncated note. */
  value(value: unknown, resource: string, name: string, limit = this.limit): unknown {
    if (value === undefined) return undefined;
    const json = JSON.stringify(value) ?? "null";
    if (json.length <= limit) return value;
    this.truncated = true;
    if (!this.links.has(resource)) this.links.set(resource, { uri: resource, name });
    const note: Truncated = {
      truncated: true,
      chars: json.length,
      preview: json.slice(0, Math.max(40, Math.floor(limit / 2))),
      resource,
    };
    return note;
  }

  /**
   * A recorded error with its message, stack and details each cut to fit: an error may carry a whole
   * response body, and a final error repeats its last attempt's as its cause.
   */
  error<E extends { message: string; stack?: string; details?: Record<string, unknown> }>(
    error: E,
    resource: string,
    name: string,
  ): E {
    const limit = Math.min(this.limit, 2500);
    return {
      ...error,
      message: this.text(error.message, resource, name, Math.min(limit, 2000)),
      ...(error.stack ? { stack: this.text(error.stack, resource, name, limit) } : {}),
      ...(error.details ? { details: this.value(error.details, resource, name, limit) } : {}),
    };
  }

  /** A string cut to `limit` characters with a note saying where the rest is. */
  text(value: string, resource: string, name: string, limit = this.limit): string {
    if (value.length <= limit) return value;
    this.truncated = true;
    if (!this.links.has(resource)) this.links.set(resource, { uri: resource, name });
    return `${value.slice(0, limit)}… [${value.length - limit} more characters: ${resource}]`;
  }
}

/** Characters of an answer as it travels (JSON). */
export function answerSize(result: unknown): number {
  return JSON.stringify(result)?.length ?? 0;
}

/**
 * `text` cut to about `max` characters, its beginning and its end kept (an echoed value sits in the
 * middle of a message, what to do at its end), saying how much was cut.
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const note = ` … [${text.length - max} characters cut] … `;
  const room = Math.max(0, max - note.length);
  const tail = Math.min(Math.floor(room / 4), 600);
  return `${text.slice(0, room - tail)}${note}${tail ? text.slice(-tail) : ""}`;
}

/**
 * A tool result that fits `max`: returned as it is when it does; else its text is cut, and when its
 * structured content alone is too large, an isError result that says so (and what to ask instead).
 */
export function withinBudget(result: CallToolResult, max = MAX_ANSWER_CHARS): CallToolResult {
  const size = answerSize(result);
  if (size <= max) return result;
  const texts = result.content.filter((c) => c.type === "text").length;
  const rest = answerSize({ ...result, content: result.content.filter((c) => c.type !== "text") });
  // JSON escaping can make text longer as it travels: measure and cut again until it fits.
  let room = Math.floor((max - rest - 100) / Math.max(1, texts));
  for (let i = 0; room > 200 && i < 5; i++) {
    const cut: CallToolResult = {
      ...result,
      content: result.content.map((c) => (c.type === "text" ? { ...c, text: cutText(c.text, room) } : c)),
    };
    const over = answerSize(cut) - max;
    if (over <= 0) return cut;
    room -= over + 50;
  }
  log(
    "error",
    "waymark mcp",
    `an answer of ${size} characters did not fit the ${max}-character budget and was replaced by an error (a bug in Waymark)`,
  );
  return {
    content: [
      {
        type: "text",
        text: `ANSWER_TOO_LARGE: The answer had ${size} characters, more than the ${max} an answer may hold. Ask for less (a smaller limit, one entry with get_step), or read the values whole with resources/read. This is a bug in Waymark: the server's stderr log has a line about it.`,
      },
    ],
    isError: true,
  };
}

function toResult<T extends Record<string, unknown>>(answer: Answer<T>, shrinker: Shrinker): CallToolResult {
  const links = new Map<string, Link>();
  for (const l of answer.links ?? []) links.set(l.uri, l);
  for (const [uri, l] of shrinker.links) links.set(uri, l);
  const truncated = answer.truncated || shrinker.truncated;
  const note = truncated
    ? "\n\nSome values were too large for this answer and were cut (marked truncated). Read them whole with resources/read on the linked resources."
    : "";
  return {
    content: [
      { type: "text", text: answer.text + note },
      ...[...links.values()].map((l) => ({
        type: "resource_link" as const,
        uri: l.uri,
        name: l.name,
        mimeType: "application/json",
        ...(l.description ? { description: l.description } : {}),
      })),
    ],
    structuredContent: answer.structured,
  };
}

/**
 * Builds an answer at decreasing value limits until it fits the budget. `render` may also trim lists
 * itself with `fitItems`. Returns the first result that fits (else the smallest, cut by withinBudget).
 */
export function fitAnswer<T extends Record<string, unknown>>(
  render: (s: Shrinker) => Answer<T>,
  max = MAX_ANSWER_CHARS,
): CallToolResult {
  let last: CallToolResult | undefined;
  for (const limit of VALUE_LIMITS) {
    const s = new Shrinker(limit);
    last = toResult(render(s), s);
    if (answerSize(last) <= max) return last;
  }
  return withinBudget(last!, max);
}

/**
 * The longest prefix of `items` whose rendering fits `max` characters as JSON (at least one item).
 * Used by listing tools to end a page early and hand out a cursor for the rest.
 */
export function fitItems<T>(items: T[], max: number): T[] {
  let total = 2;
  const out: T[] = [];
  for (const item of items) {
    const size = (JSON.stringify(item)?.length ?? 4) + 1;
    if (out.length > 0 && total + size > max) break;
    total += size;
    out.push(item);
  }
  return out;
}
