// What the engine does for ctx.child (child.ts): creates and finds child runs, and wakes parents waiting on
// them in memory when a child ends here or is seen ended after another process's commit.

import { type RunRow, type Store, TERMINAL_STATUSES } from "../storage/store.js";
import type { AnyWorkflow } from "../workflow.js";
import type { Wait } from "./core.js";
import type { Definitions } from "./definitions.js";

/** How a child run is created: the engine's own run creation, with the parent's id. */
export type CreateChild = (
  workflow: string,
  key: string,
  input: unknown,
  parentRunId: number,
) => Promise<RunRow>;

/** Child runs for the executions of one engine. */
export class ChildRuns {
  /** Child waits held in memory, by the child run's id. */
  private readonly waits = new Map<number, Set<Wait>>();

  constructor(
    private readonly store: Store,
    private readonly defs: Definitions,
    private readonly create: CreateChild,
  ) {}

  /** Creates the run (claimed and begun here when it can) or finds it by workflow and key. */
  start(req: { workflow: string; key: string; input: unknown; parentRunId: number }): Promise<RunRow> {
    return this.create(req.workflow, req.key, req.input, req.parentRunId);
  }

  /** The stored record of a run. */
  byId(id: number): Promise<RunRow | undefined> {
    return this.store.getRun(id);
  }

  /** The stored record of a run by workflow and key. */
  byKey(workflow: string, key: string): Promise<RunRow | undefined> {
    return this.store.findRun(workflow, key);
  }

  /** The registered name of a workflow definition, or undefined. */
  nameOf(def: AnyWorkflow): string | undefined {
    for (const [name, versions] of this.defs) for (const d of versions.values()) if (d === def) return name;
    return undefined;
  }

  /** Wakes the wait when its child run ends in this process (or is seen ended after another's commit). */
  watch(wait: Wait): void {
    const id = wait.child!.id;
    let set = this.waits.get(id);
    if (!set) this.waits.set(id, (set = new Set()));
    set.add(wait);
  }

  unwatch(wait: Wait): void {
    const set = this.waits.get(wait.child!.id);
    set?.delete(wait);
    if (set?.size === 0) this.waits.delete(wait.child!.id);
  }

  /** Run `id` ended: the parents waiting on it in memory look at it again. */
  ended(id: number): void {
    const set = this.waits.get(id);
    if (!set) return;
    for (const w of [...set]) {
      w.exec.release(w);
      w.resolve();
    }
  }

  /** After another process's commit: children waited on here that ended there wake their parents. */
  async check(): Promise<void> {
    if (this.waits.size === 0) return;
    for (const row of await this.store.getRuns([...this.waits.keys()])) {
      if (TERMINAL_STATUSES.includes(row.status)) this.ended(row.id);
    }
  }
}
