// Workflow definitions by name and version: what a registry must hold, and what it publishes.

import { z } from "zod";
import { NoCodeError, UnknownWorkflowError, VersionMissingError } from "../errors.js";
import type { Store, WorkflowMeta } from "../storage/store.js";
import type { AnyWorkflow } from "../workflow.js";
import { describe } from "./query-input.js";

/** Workflows by name, each with its registered versions. */
export type Definitions = Map<string, Map<number, AnyWorkflow>>;

/** Publishes a registry's workflows so processes without their code can validate messages and show them. */
export async function publishDefinitions(store: Store, defs: Definitions, now: number): Promise<void> {
  const meta: WorkflowMeta[] = [];
  for (const [name, versions] of defs) {
    for (const def of versions.values()) {
      const queues: Record<string, unknown> = {};
      for (const [q, schema] of Object.entries(def.queues as Record<string, z.ZodType>)) {
        // What a sender may send: fields with defaults are optional, and unknown keys are dropped, not refused.
        try {
          queues[q] = z.toJSONSchema(schema, { unrepresentable: "any", io: "input" });
        } catch {
          queues[q] = {};
        }
      }
      meta.push({
        name,
        version: def.version,
        description: def.description ?? null,
        queues: JSON.stringify(queues),
        actions: JSON.stringify(Object.keys(def.actions)),
        registeredAt: now,
      });
    }
  }
  // A version stored as it is now (same description, queues and actions) is not written again: most starts
  // change nothing, and a write transaction at every start is part of what a resume costs. Its registered
  // time stays the time it was last published with a change.
  const stored = new Map((await store.workflowMeta()).map((m) => [`${m.name}\u0000${m.version}`, m]));
  const changed = meta.filter((m) => {
    const was = stored.get(`${m.name}\u0000${m.version}`);
    return !was || was.description !== m.description || was.queues !== m.queues || was.actions !== m.actions;
  });
  if (changed.length > 0) await store.registerWorkflows(changed);
}

/** Refuses a registry that lacks a version some live run still needs. */
export async function checkVersions(store: Store, defs: Definitions): Promise<void> {
  const missing: string[] = [];
  for (const live of await store.liveVersions()) {
    const versions = defs.get(live.workflow);
    if (versions && !versions.has(live.version)) {
      missing.push(
        `${live.workflow} version ${live.version} (${live.count} live run${live.count === 1 ? "" : "s"}: ${live.keys.slice(0, 5).join(", ")}${live.count > 5 ? ", ..." : ""})`,
      );
    }
  }
  if (missing.length) {
    throw new VersionMissingError(missing);
  }
}

/** The latest registered version of a workflow; NoCodeError when nothing is registered (attached). */
export function latestDefinition(defs: Definitions, workflow: string): AnyWorkflow {
  const versions = typeof workflow === "string" ? defs.get(workflow) : undefined;
  if (!versions && defs.size === 0) {
    throw new NoCodeError(
      `This engine has no workflows (attach() reads and messages runs that another process executes), so it cannot create a run of ${describe(workflow)}. Create runs from the application that registers the workflow (setup({ use }).start()), or use engine.get(workflow, key) for an existing run.`,
    );
  }
  if (!versions)
    throw new UnknownWorkflowError(typeof workflow === "string" ? workflow : describe(workflow), [
      ...defs.keys(),
    ]);
  let best: AnyWorkflow | undefined;
  for (const d of versions.values()) if (!best || d.version > best.version) best = d;
  return best!;
}
