// Tags in tool arguments and answers: the schema of a tags argument (filter or start), and tags as text.

import { z } from "zod";
import { MAX_TAG_NAME, MAX_TAG_VALUE, MAX_TAGS } from "../engine/tags.js";
import { bounded, LIMITS } from "./limits.js";

/** A tags argument: names to exact values (the engine checks them against its limits, naming the one passed). */
export function tagsInput(purpose: string) {
  return z
    .record(bounded(LIMITS.tag, "tag name"), bounded(LIMITS.tag, "tag value"))
    .optional()
    .describe(
      `${purpose} Names to exact values, e.g. {"customer": "c-9", "region": "eu"}; at most ${MAX_TAGS} tags, names up to ${MAX_TAG_NAME} characters (letters, digits, _ . : / -), values up to ${MAX_TAG_VALUE}.`,
    );
}

/** The tags of a run in answers. */
export const tagsOutput = z.record(z.string(), z.string()).describe("The run's tags: names to values.");

/** `customer=c-9, region=eu` (empty for none). */
export function tagsText(tags: Record<string, string>): string {
  return Object.entries(tags)
    .map(([n, v]) => `${n}=${v}`)
    .join(", ");
}

/** `{ tags }` when there are any, else nothing (for queries built from optional arguments). */
export function tagsArg(tags: Record<string, string> | undefined): { tags?: Record<string, string> } {
  return tags && Object.keys(tags).length ? { tags } : {};
}
