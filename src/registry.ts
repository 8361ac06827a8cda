// setup({ use }): the set of workflows a process runs, and how to start the engine over them.

import type { WaymarkEngine } from "./engine/api.js";
import type { Clock } from "./engine/clock.js";
import type { Definitions } from "./engine/definitions.js";
import { Engine } from "./engine/engine.js";
import type { EngineEvent } from "./engine/events.js";
import { nameProblem } from "./engine/history.js";
import type { Retention } from "./engine/retention.js";
import { defineSchedules, type ScheduleDef, type SchedulesConfig } from "./engine/schedule-spec.js";
import { checkAfterStart } from "./engine/start-check.js";
import { assertStartAllowed } from "./start-guard.js";
import { checkStartOptions } from "./start-options.js";
import type { Durability } from "./storage/durability.js";
import { type OpenOptions, openStore } from "./storage/open.js";
import type { Store } from "./storage/store.js";
import type { AnyWorkflow, WorkflowEntry } from "./workflow.js";

export interface StartOptions {
  /** SQLite file path (default "./waymark.db"), ":memory:", or a Store. */
  database?: string | Store;
  clock?: Clock;
  /** "normal" (default): survives a process crash. "full": also survives power loss. */
  durability?: Durability;
  /** How long a run's lease lasts without renewal, in ms (default 15,000; at least 1,000). */
  leaseMs?: number;
  /** How often to look for other processes' writes, in ms (default 50). */
  pollMs?: number;
  /** Most runs executing in memory at once (default 5,000; 0: execute none, only store and answer). */
  maxActiveRuns?: number;
  /** Source of jitter for retry backoff (default Math.random). */
  random?: () => number;
  /** Lease owner id of this process (see EngineOptions.ownerId). */
  ownerId?: string;
  /** How long a write waits for another process's lock before failing (SQLite; default 5,000 ms). */
  busyTimeoutMs?: number;
  /**
   * After start, replay every unfinished run's history against this registry's code in the background and
   * warn (a "warning" event and a stderr line) about each run that would fail when it runs again. Default true.
   */
  deployCheck?: boolean;
  /**
   * How long finished runs of this registry's workflows are kept, per status: `{ completed: "30d", failed:
   * "90d", cancelled: "30d" }`. A workflow's own retention wins per status. Default: keep everything.
   */
  retention?: Retention;
  /**
   * Listens to every engine event from before the engine starts (as `engine.on` does after): the runs that
   * start() itself resumes, and that may end before it returns, are seen too.
   */
  on?: (event: EngineEvent) => void;
}

export interface Registry<U extends Record<string, WorkflowEntry>> {
  readonly kind: "waymark.registry";
  readonly workflows: U;
  /** Workflows by name and version. */
  readonly definitions: Definitions;
  /** Schedules by name, checked at setup. */
  readonly schedules: ReadonlyMap<string, ScheduleDef>;
  /** Opens the database and starts the engine: unfinished runs resume. */
  start(options?: StartOptions): Promise<WaymarkEngine<U>>;
}

function storeOptions(options: StartOptions): OpenOptions {
  return {
    ...(options.durability ? { durability: options.durability } : {}),
    ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}),
  };
}

/**
 * Collects workflows into a registry. A name may hold several versions: `{ approval: [v1, v2] }`. `schedules`
 * start runs of them by cron or interval (see engine/schedule-spec.ts); a bad one is refused here.
 */
export function setup<U extends Record<string, WorkflowEntry>>(config: {
  use: U;
  schedules?: SchedulesConfig<U>;
}): Registry<U> {
  if (
    typeof config !== "object" ||
    config === null ||
    typeof config.use !== "object" ||
    config.use === null
  ) {
    throw new TypeError("setup({ use: { name: workflowDefinition } }) needs a `use` object of workflows.");
  }
  const definitions: Definitions = new Map();
  for (const [name, entry] of Object.entries(config.use)) {
    const problem = nameProblem(name);
    if (problem) throw new TypeError(`Workflow name ${JSON.stringify(name)} is invalid: ${problem}`);
    const list = (Array.isArray(entry) ? entry : [entry]) as AnyWorkflow[];
    const versions = new Map<number, AnyWorkflow>();
    for (const def of list) {
      if (def?.kind !== "waymark.workflow") {
        throw new TypeError(`setup: "${name}" is not a workflow; build it with workflow({ run, ... }).`);
      }
      if (versions.has(def.version)) {
        throw new TypeError(
          `setup: workflow "${name}" has version ${def.version} twice; give each version its own number.`,
        );
      }
      versions.set(def.version, def);
    }
    if (versions.size === 0) throw new TypeError(`setup: workflow "${name}" has no definitions.`);
    definitions.set(name, versions);
  }
  const schedules = defineSchedules(config.schedules, new Set(definitions.keys()));
  return {
    kind: "waymark.registry",
    workflows: config.use,
    definitions,
    schedules,
    async start(options: StartOptions = {}) {
      assertStartAllowed("registry.start()");
      checkStartOptions(options, "registry.start()");
      // Checkpoints on a worker thread keep them out of commits; with FULL durability SQLite's own
      // checkpoints measured cheaper (the worker's fsyncs compete with every commit's), so keep those.
      const store = await openStore(options.database, {
        ...storeOptions(options),
        backgroundCheckpoints: options.durability !== "full",
      });
      const engine = new Engine(store, definitions, options, schedules);
      if (options.on) engine.on(options.on);
      // The check skips the runs resumed here, the first of them by start() itself.
      if (options.deployCheck !== false) engine.resumedHere = new Set();
      try {
        await engine.start();
      } catch (err) {
        await engine.close().catch(() => {});
        throw err;
      }
      if (options.deployCheck !== false) engine.deployCheck = checkAfterStart(engine);
      return engine as WaymarkEngine as WaymarkEngine<U>;
    },
  };
}

/**
 * Opens a database without running any workflow (what `waymark mcp --db` does beside an application):
 * reads everything, stores messages, and asks the owning process to cancel or replay.
 */
export function attach(options: StartOptions = {}): Promise<WaymarkEngine> {
  return attachWith(options, new Map());
}

/**
 * attach() that knows a registry's definitions (their names, queue and action schemas) but still executes
 * nothing: `waymark mcp --read-only --registry` answers with the code's schemas and never runs it.
 */
export async function attachWith(options: StartOptions, definitions: Definitions): Promise<WaymarkEngine> {
  assertStartAllowed("attach()");
  checkStartOptions(options, "attach()");
  const store = await openStore(options.database, storeOptions(options));
  const engine = new Engine(store, definitions, { ...options, execute: false });
  if (options.on) engine.on(options.on);
  try {
    await engine.start();
  } catch (err) {
    await engine.close().catch(() => {});
    throw err;
  }
  return engine;
}
