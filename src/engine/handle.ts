// A handle on one run: message it, call its actions, read it, await it, cancel it.

import type { z } from "zod";
import type { RunStatus } from "../storage/store.js";
import type { ActionsOf, AnyWorkflow, OutputOf, QueuesOf, StateOf } from "../workflow.js";
import type { SendOptions, SendResult, WaymarkEngine } from "./api.js";
import type { ReplayOptions, ReplayPlan, ReplayRequest } from "./replay-types.js";
import type { HistoryEntry, RunInfo } from "./views.js";

type ActionArgs<F> = F extends (c: any, ...args: infer A) => any ? A : never;
type ActionResult<F> = F extends (...args: any[]) => infer R ? Awaited<R> : never;

/** What a handle calls on its engine. */
type HandleApi = Pick<WaymarkEngine, "send" | "action" | "info" | "history" | "result" | "cancel" | "replay">;

export class RunHandle<W = AnyWorkflow> {
  constructor(
    private readonly api: HandleApi,
    /** The run's id in this database. */
    readonly id: number,
    readonly workflow: string,
    readonly key: string,
  ) {}

  /** Sends a message to one of the run's queues; durable when this resolves. */
  send<K extends keyof QueuesOf<W> & string>(
    queue: K,
    body: QueuesOf<W>[K] extends z.ZodType ? z.input<QueuesOf<W>[K]> : unknown,
    options?: SendOptions,
  ): Promise<SendResult> {
    return this.api.send(this.id, queue, body, options);
  }

  /** Calls an action of the workflow with the run's committed state. */
  action<K extends keyof ActionsOf<W> & string>(
    name: K,
    ...args: ActionArgs<ActionsOf<W>[K]>
  ): Promise<ActionResult<ActionsOf<W>[K]>> {
    return this.api.action(this.id, name, args) as Promise<ActionResult<ActionsOf<W>[K]>>;
  }

  /** The run's committed state. */
  async state(): Promise<StateOf<W>> {
    return (await this.api.info(this.id)).state as StateOf<W>;
  }

  async status(): Promise<RunStatus> {
    return (await this.api.info(this.id)).status;
  }

  /** Everything known about the run: status, state, what it waits on, error, times. */
  info(): Promise<RunInfo> {
    return this.api.info(this.id);
  }

  /** The run's history entries (a page; pass the last id as `after` for the next). */
  history(options?: { after?: number; limit?: number }): Promise<HistoryEntry[]> {
    return this.api.history(this.id, options);
  }

  /** Resolves the run's output when it completes; rejects when it fails, is cancelled, or `timeout` (ms of the engine's clock) passes. */
  result(options?: { timeout?: number }): Promise<OutputOf<W>> {
    return this.api.result(this.id, options) as Promise<OutputOf<W>>;
  }

  /** Cancels the run (see Engine.cancel); `{ rollback: true }` runs the undo handlers of its completed steps first. */
  cancel(options?: { rollback?: boolean }): Promise<RunStatus | "requested"> {
    return this.api.cancel(this.id, options);
  }

  /** Replays the run after a fix (see Engine.replay): from `fromStep`, or the failed step; `dryRun` to preview. */
  replay(options?: ReplayOptions & { waitMs?: number }): Promise<ReplayPlan | ReplayRequest> {
    return this.api.replay(this.id, options);
  }
}
