// step.tag: tags one attempt sets, committed with its step's record (the same batch, so atomically) and
// dropped with a failed attempt, like its state. The run's committed tags are read once, by the first step
// that sets one, so that the limit of MAX_TAGS counts them.

import type { EntryOf } from "./entries.js";
import { setDetail } from "./entries.js";
import type { RunExecution } from "./execution.js";
import { checkTag, MAX_TAGS, type Tags, tooMany } from "./tags.js";

/** Checks one step.tag call and records it in the attempt's own tags (a later value of a name wins). */
export function tagAttempt(tags: Tags, name: unknown, value: unknown, path: string): void {
  const where = `step.tag in step "${path}"`;
  checkTag(name, value, where);
  tags[name as string] = value as string;
  const count = Object.keys(tags).length;
  if (count > MAX_TAGS) throw tooMany(where, count);
}

/** Reads the run's committed tags into the execution, once (before the step's writes begin). */
export async function loadRunTags(exec: RunExecution): Promise<void> {
  if (exec.tags !== null) return;
  const loaded = await exec.core.runTags(exec.id);
  if (exec.tags === null) exec.tags = loaded;
}

/**
 * Merges a completed attempt's tags into the run's (loadRunTags first), refusing more than MAX_TAGS in all,
 * queues them with the step's record and notes them in its detail (history shows which step set a tag).
 */
export function commitStepTags(exec: RunExecution, row: EntryOf<"step">, tags: Tags, path: string): void {
  const merged = { ...exec.tags, ...tags };
  const count = Object.keys(merged).length;
  if (count > MAX_TAGS) throw tooMany(`step.tag in step "${path}"`, count);
  exec.tags = merged;
  setDetail(row, { tags });
  if (!exec.dead && !exec.verifying) exec.core.writes.tags(exec.id, tags, exec.core.owner);
}
