// Engine events for later layers (MCP subscriptions, the inspector): run status, entries, broadcasts.

import { log } from "../log.js";
import type { EntryRow, PrunedCount } from "../storage/store.js";

export type EngineEvent =
  | { type: "run"; runId: number; workflow: string; key: string; status: string }
  | { type: "entry"; runId: number; workflow: string; key: string; row: EntryRow }
  | { type: "broadcast"; runId: number; workflow: string; key: string; event: string; data: unknown }
  /** Finished runs deleted by retention or engine.prune (`count` in all, by workflow and status in `runs`). */
  | { type: "pruned"; count: number; runs: PrunedCount[] }
  /** Another process changed the database (runs it owns may have moved on). */
  | { type: "external" }
  /** A write or read of the database failed; affected runs retry once it works again. */
  | { type: "storage-error"; code: string; message: string; runIds: number[] }
  /**
   * Something that will go wrong later, found early: HISTORY_DRIFT for an unfinished run whose history the
   * registered code no longer matches (found by the deploy check after start; details: its DriftFinding).
   */
  | {
      type: "warning";
      code: "HISTORY_DRIFT";
      message: string;
      runId: number;
      workflow: string;
      key: string;
      details: Record<string, unknown>;
    };

type Listener = (e: EngineEvent) => void;

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/**
 * A small synchronous event hub: global listeners see every event; per-run listeners see only their
 * run's status changes and external changes (so a thousand waiters cost nothing per step).
 * A throwing listener never breaks the engine.
 */
export class EventHub {
  private readonly listeners = new Set<Listener>();
  private readonly perRun = new Map<number, Set<Listener>>();
  private readonly external = new Set<Listener>();
  /** Told of every run that finished (the pruner plans its next pass by it); not a listener (see observed). */
  onFinished: ((workflow: string, status: string) => void) | null = null;

  on(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Listens to one run's status changes and to other processes' changes. */
  onRun(runId: number, listener: Listener): () => void {
    let set = this.perRun.get(runId);
    if (!set) this.perRun.set(runId, (set = new Set()));
    set.add(listener);
    this.external.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.perRun.delete(runId);
      this.external.delete(listener);
    };
  }

  /** True when someone listens to every event (entries are only built for them). */
  get observed(): boolean {
    return this.listeners.size > 0;
  }

  emit(event: EngineEvent): void {
    for (const l of this.listeners) call(l, event);
    if (event.type === "run") {
      if (this.onFinished && TERMINAL.has(event.status))
        call(() => this.onFinished!(event.workflow, event.status), event);
      const set = this.perRun.get(event.runId);
      if (set) for (const l of [...set]) call(l, event);
    } else if (event.type === "external") {
      for (const l of [...this.external]) call(l, event);
    }
  }

  clear(): void {
    this.listeners.clear();
    this.perRun.clear();
    this.external.clear();
  }
}

function call(listener: Listener, event: EngineEvent): void {
  try {
    // An async listener's rejection is caught too: unhandled, Node's default ends the process with every run.
    const answer: unknown = listener(event);
    if (typeof (answer as PromiseLike<unknown> | undefined)?.then === "function")
      (answer as PromiseLike<unknown>).then(undefined, (err: unknown) => threw(err));
  } catch (err) {
    threw(err);
  }
}

function threw(err: unknown): void {
  log("error", "waymark", `an event listener threw: ${describeThrown(err)}`);
}

/** What a listener threw, as text; never throws itself (a revoked Proxy, an object with no toString). */
function describeThrown(err: unknown): string {
  try {
    return err instanceof Error ? String(err.message) : String(err);
  } catch {
    return "a value that cannot be shown as text";
  }
}
