// Repairs a refused message body where the fix is unambiguous: "yes" for a boolean, "42" for a number,
// 42 for a string. Anything else is left to a person.

import type { z } from "zod";

/** A body the schema accepts, with the changes made, or null when no simple repair works. */
export interface Repaired {
  body: unknown;
  /** `approve: "yes" → true`, one per changed field. */
  changes: string[];
}

const TRUE = new Set(["true", "yes", "y", "1", "on", "approve", "approved"]);
const FALSE = new Set(["false", "no", "n", "0", "off", "reject", "rejected"]);

function coerce(value: unknown, expected: string): { ok: true; value: unknown } | { ok: false } {
  if (expected === "boolean") {
    const s = String(value).trim().toLowerCase();
    if (TRUE.has(s)) return { ok: true, value: true };
    if (FALSE.has(s)) return { ok: true, value: false };
  } else if (expected === "number" || expected === "int") {
    if (typeof value === "string" && value.trim() !== "" && Number.isFinite(Number(value)))
      return { ok: true, value: Number(value) };
  } else if (expected === "string") {
    if (typeof value === "number" || typeof value === "boolean") return { ok: true, value: String(value) };
  }
  return { ok: false };
}

function clone(value: unknown): unknown {
  return value === undefined ? undefined : JSON.parse(JSON.stringify(value));
}

/** Tries type coercions on the fields the schema complains about, a few rounds at most. */
export function repairBody(schema: z.ZodType, body: unknown): Repaired | null {
  if (typeof body !== "object" || body === null) return null;
  let current = clone(body) as Record<string, unknown>;
  const changes: string[] = [];
  for (let round = 0; round < 5; round++) {
    const parsed = schema.safeParse(current);
    if (parsed.success) return changes.length ? { body: current, changes } : null;
    let changed = false;
    for (const issue of parsed.error.issues as Array<{
      code: string;
      path: PropertyKey[];
      expected?: string;
    }>) {
      if (issue.code !== "invalid_type" || !issue.expected || issue.path.length === 0) continue;
      let parent: any = current;
      for (const p of issue.path.slice(0, -1)) parent = parent?.[p as string];
      const last = issue.path.at(-1) as string;
      if (parent === null || typeof parent !== "object" || !(last in parent)) continue;
      const fixed = coerce(parent[last], issue.expected);
      if (!fixed.ok) continue;
      changes.push(
        `${issue.path.join(".")}: ${JSON.stringify(parent[last])} → ${JSON.stringify(fixed.value)}`,
      );
      parent[last] = fixed.value;
      changed = true;
    }
    if (!changed) return null;
    current = clone(current) as Record<string, unknown>;
  }
  return null;
}
