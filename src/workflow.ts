// What users write: workflow definitions, the contexts their code receives, and the registry.

import type { z } from "zod";
import type { ChildAddress, ChildOptions } from "./engine/child-types.js";
import { type ConcurrencyOptions, checkConcurrency } from "./engine/concurrency.js";
import { textProblem } from "./engine/query-input.js";
import { parseRetention, type Retention, type RetentionMs } from "./engine/retention.js";
import type { Register } from "./index.js";

/** Milliseconds, or a string of number+unit parts (ms, s, m, h, d, w): 500, "500ms", "10s", "1h30m". */
export type Duration = number | string;

/** Zod schemas for a workflow's named queues. */
export type QueueSchemas = Record<string, z.ZodType>;

/** What a rollback handler receives: the error that caused the rollback, its own signal and attempt. */
export interface RollbackContext {
  /** The error the run failed with (a StepFailedError, a FatalError, a HistoryDivergedError...), or the cancel. */
  readonly error: Error;
  /** Fires when this handler's attempt times out or the engine stops running the run. */
  readonly signal: AbortSignal;
  /** 1 for the first attempt of this handler. */
  readonly attempt: number;
  /** Path of the step being undone (e.g. "reserve-flight", "book[car]/reserve"). */
  readonly step: string;
  readonly key: string;
  readonly workflow: string;
}

/** Undoes a completed step: receives its recorded output (as JSON gave it back). Retried like its step. */
export type RollbackHandler<T = unknown> = (rb: RollbackContext, output: T) => Promise<void> | void;

/** Options of one step. */
export interface StepOptions<T = any> {
  /** Retries after the first attempt (default 3). A FatalError is never retried. */
  retries?: number;
  /** Backoff before retry n: `initial * factor^(n-1)`, capped at `max`, with jitter. A number is `initial` in ms. */
  backoff?: Duration | { initial?: Duration; max?: Duration; factor?: number; jitter?: boolean };
  /** Per-attempt time limit; the step's AbortSignal fires when it passes. */
  timeout?: Duration;
  /** Recorded with the entry and shown in history (what the step worked on). */
  input?: unknown;
  /**
   * Undoes this step if the run later fails for good (or is cancelled with `{ rollback: true })`: handlers
   * of completed steps run in reverse order of completion, each recorded. Needs a ctx.rollbackCheckpoint first.
   */
  rollback?: RollbackHandler<T>;
}

/** What a step's function receives: the run's writable state and the attempt's signal. */
export interface StepContext<S = any, Q extends QueueSchemas = QueueSchemas> {
  /** The run's state; writes commit atomically with the step's record, or are discarded if it fails. */
  state: S;
  /** Fires when the attempt times out or the run is cancelled. */
  readonly signal: AbortSignal;
  /** 1 for the first attempt. */
  readonly attempt: number;
  readonly name: string;
  readonly key: string;
  readonly workflow: string;
  /** Progress to connected clients (not recorded). */
  broadcast(event: string, data?: unknown): void;
  /**
   * Tags the run (to find it by: list_runs, list_failures); committed with this step's record, dropped if
   * this attempt fails. A name the run has takes the new value. At most 20 tags per run, names of at most
   * 64 letters, digits or _ . : / -, values of at most 256 characters.
   */
  tag(name: string, value: string): void;
  /** @internal phantom for queue typing */
  readonly __queues?: Q;
}

/** Return from a loop iteration: go on with new loop state, or stop with a value. */
export type LoopResult<LS, T> = { continue: true; state: LS } | { break: true; value: T };

/** Helpers to build loop results. */
export const Loop = {
  continue<LS>(state: LS): { continue: true; state: LS } {
    return { continue: true, state };
  },
  break<T>(value: T): { break: true; value: T } {
    return { break: true, value };
  },
};

export interface LoopOptions<S, Q extends QueueSchemas, LS, T> {
  /** Loop-carried state (JSON), recorded after every iteration. */
  state: LS;
  run: (ctx: WorkflowContext<S, Q>, state: LS) => Promise<LoopResult<LS, T>>;
  /** How many recent iterations keep their full history (default 20); older ones are compacted. */
  historyKeep?: number;
}

type BranchFns<S, Q extends QueueSchemas> = Record<string, (ctx: WorkflowContext<S, Q>) => Promise<unknown>>;
type BranchResults<B> = { [K in keyof B]: B[K] extends (...args: any[]) => Promise<infer R> ? R : never };

/** A message taken by a wait on several queues: the queue it came from and its body, typed per queue. */
export type QueueMessage<Q extends QueueSchemas, K extends keyof Q & string> = {
  [P in K]: { queue: P; body: z.output<Q[P]> };
}[K];
/** The context a workflow's `run` receives. Every call takes a name unique within its scope. */
export interface WorkflowContext<S = any, Q extends QueueSchemas = QueueSchemas> {
  /** The run's state (read it here; write it inside steps). */
  readonly state: Readonly<S>;
  readonly key: string;
  readonly workflow: string;
  /** The version of the workflow this run is pinned to. */
  readonly workflowVersion: number;
  /** Fires when the run is cancelled. */
  readonly signal: AbortSignal;

  /** Runs `fn` once and records its result; on replay returns the record. */
  step<T>(
    name: string,
    fn: (step: StepContext<S, Q>) => Promise<T> | T,
    options?: StepOptions<NoInfer<T>>,
  ): Promise<T>;
  /**
   * Arms rollback from here on (recorded): steps after it, in this scope and those nested in it, may carry
   * a `rollback` handler, which runs if the run fails for good. A handler on a step before any checkpoint is refused.
   */
  rollbackCheckpoint(name: string): Promise<void>;
  /** A durable timer. */
  sleep(name: string, duration: Duration): Promise<void>;
  sleepUntil(name: string, at: Date | number): Promise<void>;
  queue: {
    /** Waits for the next message on a queue. With `timeout`, resolves null when it passes. */
    next<K extends keyof Q & string>(name: string, options: { queue: K }): Promise<z.output<Q[K]>>;
    next<K extends keyof Q & string>(
      name: string,
      options: { queue: K; timeout: Duration },
    ): Promise<z.output<Q[K]> | null>;
    /**
     * Waits for the first message on any of several queues (messages already sent count, earliest sent
     * first) and resolves it with the queue it came from. With `timeout`, resolves null when it passes.
     */
    next<K extends keyof Q & string>(
      name: string,
      options: { queue: readonly K[] },
    ): Promise<QueueMessage<Q, K>>;
    next<K extends keyof Q & string>(
      name: string,
      options: { queue: readonly K[]; timeout: Duration },
    ): Promise<QueueMessage<Q, K> | null>;
    /**
     * Waits for `count` messages on a queue and resolves their bodies, earliest sent first; with `timeout`,
     * resolves whatever arrived (possibly none) once it passes. Each message is taken exactly once.
     */
    nextBatch<K extends keyof Q & string>(
      name: string,
      options: { queue: K; count: number; timeout?: Duration },
    ): Promise<Array<z.output<Q[K]>>>;
  };
  /** Runs branches in parallel, each with its own history scope; resolves when all complete. */
  join<B extends BranchFns<S, Q>>(
    name: string,
    branches: B,
  ): Promise<BranchResults<B> & Iterable<BranchResults<B>[keyof B]>>;
  /** Runs branches in parallel; the first to complete wins and the others are cancelled. */
  race<B extends BranchFns<S, Q>>(
    name: string,
    branches: B,
  ): Promise<{ [K in keyof B]: { winner: K; value: BranchResults<B>[K] } }[keyof B]>;
  /** A long-lived loop whose older iterations are compacted out of history. */
  loop<LS, T>(name: string, options: LoopOptions<S, Q, LS, T>): Promise<T>;
  /** Progress to connected clients (not recorded; not repeated on replay). */
  broadcast(event: string, data?: unknown): void;
  /** Marks an entry that older histories hold and this code no longer runs. */
  removed(name: string): Promise<void>;
  /**
   * A patch point: returns the version recorded in history for `name`, or records and returns `latest`
   * when this run reaches the point for the first time. Runs that passed the point before it existed get 1.
   */
  version(name: string, latest: number): Promise<number>;
  /**
   * Starts (or finds, by workflow and key) a run of another workflow and waits for its result, suspended.
   * A failed or cancelled child throws ChildRunFailedError. With `{ detach: true }` returns its address at
   * once. `workflow` is a registered name (typed through `Register`) or the definition itself.
   */
  child<N extends RegisteredName>(
    name: string,
    workflow: N,
    options: ChildOptions<InputOf<RegisteredWorkflows[N]>> & { detach: true },
  ): Promise<ChildAddress>;
  child<N extends RegisteredName>(
    name: string,
    workflow: N,
    options: ChildOptions<InputOf<RegisteredWorkflows[N]>> & { detach?: false },
  ): Promise<OutputOf<RegisteredWorkflows[N]>>;
  child<W extends AnyWorkflow>(
    name: string,
    workflow: W,
    options: ChildOptions<InputOf<W>> & { detach: true },
  ): Promise<ChildAddress>;
  child<W extends AnyWorkflow>(
    name: string,
    workflow: W,
    options: ChildOptions<InputOf<W>> & { detach?: false },
  ): Promise<OutputOf<W>>;
}

/** The workflows the application registered for ctx.child's types (see Register), or any workflow. */
type RegisteredWorkflows = Register extends { workflows: infer U extends Record<string, WorkflowEntry> }
  ? U
  : Record<string, AnyWorkflow>;
type RegisteredName = keyof RegisteredWorkflows & string;

/** What an action receives: the run's committed state (read-only) and a way to message the run. */
export interface ActionContext<S = any, Q extends QueueSchemas = QueueSchemas> {
  readonly state: Readonly<S>;
  readonly key: string;
  readonly workflow: string;
  readonly status: string;
  send<K extends keyof Q & string>(
    queue: K,
    body: z.input<Q[K]>,
    options?: { idempotencyKey?: string },
  ): Promise<void>;
}

type ActionFns<S, Q extends QueueSchemas> = Record<
  string,
  (c: ActionContext<S, Q>, ...args: any[]) => unknown
>;

export interface WorkflowConfig<S, Q extends QueueSchemas, I, O, A> {
  /** Runs keep the version they started on; new runs take the latest registered. Default 1. */
  version?: number;
  /** The initial state of every run (JSON). */
  state?: S;
  queues?: Q;
  /** Functions callers run against a run's committed state: `actions: { getState: (c) => c.state }`. */
  actions?: A & ActionFns<S, NoInfer<Q>>;
  run: (ctx: WorkflowContext<S, Q>, input: I) => Promise<O>;
  /** Shown to people and AI clients. */
  description?: string;
  /** At most `limit` runs (per value of `key(input)`, or of the whole workflow) execute at once. */
  concurrency?: ConcurrencyOptions<I>;
  /**
   * How long this workflow's finished runs are kept, per status: `{ completed: "30d", failed: "90d" }`; wins
   * over registry.start({ retention }) per status (null keeps). Default: keep everything.
   */
  retention?: Retention;
}

/** A workflow definition, as returned by `workflow()`. */
export interface WorkflowDefinition<
  S = any,
  Q extends QueueSchemas = QueueSchemas,
  I = any,
  O = any,
  A = ActionFns<S, Q>,
> {
  readonly kind: "waymark.workflow";
  readonly version: number;
  readonly initialState: S;
  readonly queues: Q;
  readonly actions: A;
  readonly description: string | undefined;
  /** The concurrency limit, if any (see engine/concurrency.ts). */
  readonly concurrency: ConcurrencyOptions<I> | undefined;
  /** How long finished runs are kept per status (ms, null: keep), as given to workflow({ retention }). */
  readonly retention: RetentionMs | undefined;
  readonly run: (ctx: WorkflowContext<S, Q>, input: I) => Promise<O>;
}

/** Defines a workflow: an async function over a durable context. */
export function workflow<
  S extends object = {},
  Q extends QueueSchemas = {},
  I = undefined,
  O = unknown,
  A = {},
>(config: WorkflowConfig<S, Q, I, O, A>): WorkflowDefinition<S, Q, I, O, A> {
  if (typeof config !== "object" || config === null || typeof config.run !== "function") {
    throw new TypeError(
      "workflow({ run }) needs a run function: workflow({ state: {...}, run: async (ctx) => {...} })",
    );
  }
  const version = config.version ?? 1;
  if (!Number.isInteger(version) || version < 1 || version > 2_147_483_647) {
    throw new TypeError(
      `workflow version must be a whole number from 1 to 2,147,483,647, got ${String(config.version)}`,
    );
  }
  // Stored as text on every store, and PostgreSQL text holds no NUL character.
  if (config.description !== undefined) {
    const text =
      typeof config.description === "string" ? textProblem(config.description) : "it is not a string";
    if (text)
      throw new TypeError(`workflow({ description }) takes text, and this cannot be stored: ${text}.`);
  }
  const shape = (what: string, v: unknown) =>
    v === undefined || (typeof v === "object" && v !== null && !Array.isArray(v))
      ? null
      : `workflow({ ${what} }) takes an object; got ${Array.isArray(v) ? "an array" : typeof v}.`;
  const problem =
    shape("queues", config.queues) ?? shape("actions", config.actions) ?? shape("state", config.state);
  if (problem) throw new TypeError(problem);
  for (const [name, schema] of Object.entries(config.queues ?? {})) {
    // Queue names are stored as text, and a suspended run lists them between "|" marks.
    if (name.length === 0 || name.length > 200 || /[|\u0000-\u001f]/.test(name) || textProblem(name)) {
      throw new TypeError(
        `workflow({ queues }): queue name ${JSON.stringify(name)} is invalid: a queue name has 1 to 200 characters of well-formed Unicode, without "|" or control characters.`,
      );
    }
    if (typeof (schema as { safeParse?: unknown } | null)?.safeParse !== "function") {
      throw new TypeError(
        `workflow({ queues }): queue "${name}" needs a zod schema, e.g. { ${name}: z.object({ approve: z.boolean() }) }; use z.unknown() to accept any JSON.`,
      );
    }
  }
  for (const [name, action] of Object.entries(config.actions ?? {})) {
    if (typeof action !== "function") {
      throw new TypeError(
        `workflow({ actions }): action "${name}" must be a function, e.g. { ${name}: (c) => c.state }; got ${typeof action}.`,
      );
    }
  }
  const concurrency = checkConcurrency(config.concurrency);
  const retention =
    config.retention === undefined ? undefined : parseRetention(config.retention, "workflow({ retention })");
  if (retention && "problem" in retention) throw new TypeError(retention.problem as string);
  return Object.freeze({
    kind: "waymark.workflow" as const,
    version,
    initialState: (config.state ?? {}) as S,
    queues: (config.queues ?? {}) as Q,
    actions: (config.actions ?? {}) as A,
    description: config.description,
    concurrency,
    retention: retention as RetentionMs | undefined,
    run: config.run,
  });
}

export type AnyWorkflow = WorkflowDefinition<any, any, any, any, any>;
/** A registry entry: one definition, or several versions of one workflow. */
export type WorkflowEntry = AnyWorkflow | readonly AnyWorkflow[];
export type LatestOf<E> = E extends readonly (infer D)[] ? D : E;

export type StateOf<W> = LatestOf<W> extends WorkflowDefinition<infer S, any, any, any, any> ? S : never;
export type QueuesOf<W> = LatestOf<W> extends WorkflowDefinition<any, infer Q, any, any, any> ? Q : never;
export type InputOf<W> = LatestOf<W> extends WorkflowDefinition<any, any, infer I, any, any> ? I : never;
export type OutputOf<W> = LatestOf<W> extends WorkflowDefinition<any, any, any, infer O, any> ? O : never;
export type ActionsOf<W> = LatestOf<W> extends WorkflowDefinition<any, any, any, any, infer A> ? A : never;

/** The step context type of a workflow: `WorkflowStepContextOf<typeof myWorkflow>`. */
export type WorkflowStepContextOf<W> = StepContext<StateOf<W>, QueuesOf<W>>;
/** The workflow context type of a workflow. */
export type WorkflowContextOf<W> = WorkflowContext<StateOf<W>, QueuesOf<W>>;
