// What the run-taking methods of the engine accept: a run's id or its RunHandle; anything else is refused.

import { InvalidInputError } from "../errors.js";
import { RunHandle } from "./handle.js";

/** A run as the engine's methods take it: its id (`handle.id`) or the handle itself. */
export type RunRef = number | RunHandle<any>;

/** What a value is, for the error that refuses it. */
function what(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "string")
    return `the string ${JSON.stringify(value.length > 60 ? `${value.slice(0, 60)}...` : value)}`;
  if (typeof value === "number") return `the number ${value}`;
  if (typeof value !== "object") return typeof value === "undefined" ? "undefined" : `a ${typeof value}`;
  const name = (value as object).constructor?.name;
  const keys = Object.keys(value).slice(0, 6);
  const kind = name && name !== "Object" ? `a ${name}` : "an object";
  return keys.length ? `${kind} with keys ${keys.join(", ")}` : kind;
}

/** The run id `ref` names; refuses anything but a RunHandle or a whole positive number, saying what came. */
export function runIdOf(ref: unknown, method: string): number {
  if (ref instanceof RunHandle) return ref.id;
  if (typeof ref === "number" && Number.isSafeInteger(ref) && ref > 0) return ref;
  const id = (ref as { id?: unknown } | null)?.id;
  const hint =
    typeof ref === "object" && ref !== null && typeof id === "number"
      ? ` This one has an id (${id}): pass it as ${method}(value.id, ...).`
      : typeof ref === "string"
        ? ` To find a run by workflow and key, use engine.get(workflow, key) and pass the handle.`
        : "";
  throw new InvalidInputError(
    `${method} takes a run: its RunHandle (from engine.getOrCreate or engine.get) or its id (handle.id, a whole number from 1); got ${what(ref)}.${hint}`,
    { method, got: what(ref) },
  );
}

/**
 * Refuses a handle whose id names another run in this engine's database (or none): a handle from an engine
 * on another database, whose ids mean other runs here. A handle from an engine on the same database passes.
 */
export function checkHandle(
  handle: RunHandle<any>,
  row: { workflow: string; key: string } | undefined,
  method: string,
): void {
  if (row && row.workflow === handle.workflow && row.key === handle.key) return;
  const named = JSON.stringify(`${handle.workflow}/${handle.key}`);
  const here = row ? `is ${JSON.stringify(`${row.workflow}/${row.key}`)}` : "does not exist";
  throw new InvalidInputError(
    `${method} got the handle of run ${named} (id ${handle.id}), but run ${handle.id} in this engine's database ${here}: the handle comes from an engine on another database. Pass this engine's own handle: engine.get(${JSON.stringify(handle.workflow)}, ${JSON.stringify(handle.key)}).`,
    {
      method,
      handle: `${handle.workflow}/${handle.key}`,
      runId: handle.id,
      found: row ? `${row.workflow}/${row.key}` : null,
    },
  );
}
