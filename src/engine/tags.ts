// Tags to find runs by: their limits, and the checks every way in (getOrCreate, step.tag, filters) shares.
//
// A run holds at most MAX_TAGS tags; a name is 1 to MAX_TAG_NAME letters, digits or _ . : / - (so it reads
// the same in a URL, a CLI flag `--tag name=value` and SQL); a value is a string of at most MAX_TAG_VALUE
// characters (code points: an emoji is one) without control characters; "__proto__" is refused as a name. Past a limit: TagLimitError naming it; a wrong shape: InvalidTagError.

import { InvalidInputError, InvalidTagError, TagLimitError } from "../errors.js";
import { describe, textProblem } from "./query-input.js";

/** Most tags one run holds (creation tags and step.tag together). */
export const MAX_TAGS = 20;
/** Longest tag name, in characters. */
export const MAX_TAG_NAME = 64;
/** Longest tag value, in characters. */
export const MAX_TAG_VALUE = 256;

const NAME = /^[A-Za-z0-9_.:/-]+$/;
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Tags as applications pass them: a name to its value. */
export type Tags = Record<string, string>;

/** Refuses a tag name or value that breaks a rule, saying which and how to fix it. */
export function checkTag(name: unknown, value: unknown, where: string): void {
  if (typeof name !== "string" || name.length === 0) {
    throw new InvalidTagError(where, `a tag name must be a non-empty string; got ${describe(name)}.`);
  }
  if (name.length > MAX_TAG_NAME) {
    throw new TagLimitError(
      where,
      "nameLength",
      MAX_TAG_NAME,
      name.length,
      `tag name "${name.slice(0, 40)}..." has ${name.length} characters; the limit is ${MAX_TAG_NAME}. Use a shorter name.`,
    );
  }
  if (name === "__proto__") {
    throw new InvalidTagError(where, `tag name "__proto__" is reserved; use another name.`, { name });
  }
  if (!NAME.test(name)) {
    throw new InvalidTagError(
      where,
      `tag name ${JSON.stringify(name)} may hold only letters, digits and _ . : / - (e.g. "customer", "app.region").`,
      { name },
    );
  }
  if (typeof value !== "string") {
    throw new InvalidTagError(
      where,
      `the value of tag "${name}" must be a string; got ${describe(value)}. Pass String(value) to tag by a number.`,
      { name },
    );
  }
  const length = [...value].length; // code points: an emoji is one character
  if (length > MAX_TAG_VALUE) {
    throw new TagLimitError(
      where,
      "valueLength",
      MAX_TAG_VALUE,
      length,
      `the value of tag "${name}" has ${length} characters; the limit is ${MAX_TAG_VALUE}. Tag by an id, not by the data itself.`,
    );
  }
  const problem = CONTROL.test(value) ? "it holds a control character" : textProblem(value);
  if (problem) {
    throw new InvalidTagError(where, `the value of tag "${name}" cannot be stored: ${problem}. Remove it.`, {
      name,
    });
  }
}

/** Checks a tags object (getOrCreate's, a filter's) and returns it as a plain name-to-value record. */
export function checkTags(tags: unknown, where: string, filter = false): Tags {
  if (typeof tags !== "object" || tags === null || Array.isArray(tags)) {
    throw new InvalidTagError(
      where,
      `tags must be an object of names to string values, e.g. { customer: "c-9" }; got ${describe(tags)}.`,
    );
  }
  const entries = Object.entries(tags);
  if (entries.length > MAX_TAGS) {
    if (!filter) throw tooMany(where, entries.length);
    throw new TagLimitError(
      where,
      "maxTags",
      MAX_TAGS,
      entries.length,
      `a filter names at most ${MAX_TAGS} tags (no run holds more); this one names ${entries.length}. Filter by fewer tags.`,
    );
  }
  // Null prototype: a "__proto__" name (refused above) could not replace the object's prototype anyway.
  const out: Tags = Object.create(null);
  for (const [name, value] of entries) {
    checkTag(name, value, where);
    out[name] = value as string;
  }
  return out;
}

/** The refusal of a run's tags past MAX_TAGS. */
export function tooMany(where: string, count: number): TagLimitError {
  return new TagLimitError(
    where,
    "maxTags",
    MAX_TAGS,
    count,
    `a run holds at most ${MAX_TAGS} tags; this would give it ${count}. Tag by fewer names (one tag can hold an id that points to more).`,
  );
}

/** The tags of getOrCreate's options, checked; null when there are none. */
export function createTags(options: unknown): Tags | null {
  if (options === undefined) return null;
  if (typeof options !== "object" || options === null || Array.isArray(options)) {
    throw new InvalidInputError(
      `getOrCreate takes its options after the input, e.g. { tags: { customer: "c-9" } }; got ${describe(options)}.`,
    );
  }
  for (const name of Object.keys(options)) {
    if (name !== "tags")
      throw new InvalidInputError(`getOrCreate: unknown option "${name}". Its options are: tags.`, {
        option: name,
      });
  }
  const tags = (options as { tags?: unknown }).tags;
  if (tags === undefined) return null;
  const checked = checkTags(tags, "getOrCreate option tags");
  return Object.keys(checked).length ? checked : null;
}

/** Tag rows of several runs, by run id (for views). */
export function tagsByRun(
  rows: ReadonlyArray<{ runId: number; name: string; value: string }>,
): Map<number, Tags> {
  const out = new Map<number, Tags>();
  for (const r of rows) {
    let tags = out.get(r.runId);
    if (!tags) out.set(r.runId, (tags = {}));
    tags[r.name] = r.value;
  }
  return out;
}
