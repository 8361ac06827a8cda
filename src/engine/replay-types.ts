// The answer types of a replay (what is asked, what is planned, what is requested), apart from the code that
// works them out, so the public interface names them without importing the replay machinery.

/** One entry as a plan names it. */
export interface PlannedEntry {
  id: number;
  path: string;
  kind: string;
  status: string;
}

/** What a replay would do, as shown to people and clients (dry run) and returned once applied. */
export interface ReplayPlan {
  run: string;
  /** The entry replay starts from, or null when nothing is discarded (the code reruns over all of history). */
  from: { id: number; path: string } | null;
  discard: PlannedEntry[];
  /**
   * The discarded steps, whose functions run again when the code reaches them (their side effects repeat):
   * a completed one already did its work once.
   */
  rerun: Array<{ id: number; path: string; status: string; attempts: number }>;
  /**
   * Child runs (ctx.child) of discarded entries: a completed one is reused (ctx.child finds it by its key and
   * takes its output; its side effects do not repeat), a failed or cancelled one is replayed from its failed
   * step with the parent, an unfinished one is waited for again.
   */
  children?: Array<{
    entry: { id: number; path: string };
    workflow: string;
    key: string;
    status: string;
    action: "reuse" | "replay" | "wait";
  }>;
  /**
   * Steps a rollback undid (their handler completed). `redo` true: the replay discards the step, so it runs
   * again. False: its record is kept, so the replay goes on as if it were done although it was undone;
   * replay from that step to redo it.
   */
  undone?: Array<{ id: number; path: string; redo: boolean }>;
  /** Containers of the chosen entry, kept but reopened. */
  reopen: Array<{ id: number; path: string; kind: string }>;
  restoreMessages: Array<{ id: number; queue: string; body: unknown; sentAt: number }>;
  restoreState: unknown;
  version: { from: number; to: number };
  dryRun: boolean;
  applied: boolean;
  /**
   * True when the new code replayed the kept history to its end without a mismatch. False when this
   * process lacks the code (the owner checks when it applies the replay), or when the code awaited
   * something of its own (a timer, I/O) for longer than the check waits (3 s on the engine's clock) before
   * reaching it.
   */
  checkedAgainstCode: boolean;
}

/** How a replay is asked for. */
export interface ReplayOptions {
  /** Entry path (e.g. "calculate-tax", "notify[mail]/send") or id. Default: the failed entry. */
  fromStep?: string | number;
  /** Version to run from now on. Default: the latest registered. */
  version?: number;
  /** Show what would happen and change nothing. */
  dryRun?: boolean;
  /** Who asked (recorded in history). */
  requestedBy?: string;
}

/** A replay stored for the process that runs the workflow, not yet carried out. */
export interface ReplayRequest {
  requested: true;
  requestId: number;
  run: string;
  message: string;
}
