// The shape of a diagnosis: what is wrong with a run, the entry to blame, the facts, and what to do next.

/** What kind of trouble a run is in (or "healthy" when it is in none). */
export type Category =
  | "step-failed"
  | "fatal-error"
  | "step-timeout"
  | "code-drift"
  | "workflow-error"
  | "stuck-waiting"
  | "rejected-messages"
  | "retry-storm"
  | "sleeping-far"
  | "cancelled"
  | "stalled"
  | "queued-by-limit"
  | "healthy";

/** Every category, in the order the rules consider them. */
export const CATEGORIES: readonly Category[] = [
  "step-failed",
  "fatal-error",
  "step-timeout",
  "code-drift",
  "workflow-error",
  "stuck-waiting",
  "rejected-messages",
  "retry-storm",
  "sleeping-far",
  "cancelled",
  "stalled",
  "queued-by-limit",
  "healthy",
];

/** The entry a diagnosis blames (or, for a healthy run, the one it is at). */
export interface Culprit {
  /** Entry id (its seq), as get_step takes it. */
  id: number;
  name: string;
  /** Scope path plus name, e.g. "notify[sms]/send-sms". */
  path: string;
  /** Scope path: "" at the root, "notify[sms]" in a join branch, "agent#3" in a loop iteration. */
  scope: string;
  kind: string;
  /** The run holding the entry when it is not the run diagnosed (a child run, see Diagnosis.chain). */
  run?: { workflow: string; key: string };
}

/** One fact a diagnosis rests on, pointing at the entry (and attempt) or other record it comes from. */
export interface Evidence {
  /** A short label: "error", "frame", "attempt", "input", "state", "drift", "near-miss", ... */
  kind: string;
  /** The fact, one line, for people and models. */
  fact: string;
  /** Entry id the fact comes from. */
  entry?: number;
  /** Attempt number (from 1) within that entry. */
  attempt?: number;
  /** Another record: "message #12", "rejection #3", "run fulfilment/Order-7", "run". */
  ref?: string;
}

/** Names of the MCP tools a next action may call. */
export type ToolName =
  | "get_run"
  | "get_history"
  | "get_step"
  | "send_message"
  | "replay_run"
  | "cancel_run"
  | "wait_for_run"
  | "list_runs"
  | "diagnose_run"
  | "compare_runs";

/** What to do next: an exact tool call, or a change only a person can make (listed before the calls it enables). */
export type NextAction =
  | { kind: "call"; tool: ToolName; args: Record<string, unknown>; why: string }
  | { kind: "person"; change: string };

/** Other runs that failed the same way (same error signature). */
export interface Similar {
  /** Stable hash of workflow, entry name, error name and normalised message. */
  signature: string;
  /** The normalised message the signature is built from. */
  pattern: string;
  /** Runs with this signature in the window, this one included. */
  count: number;
  /** When the first and the latest of them failed (left out when this run is the only one). */
  firstSeen?: string;
  lastSeen?: string;
  /** A few other runs' keys, newest first. */
  keys: string[];
}

/** A structured diagnosis of one run. */
export interface Diagnosis {
  run: { workflow: string; key: string; status: string; version: number };
  category: Category;
  culprit: Culprit | null;
  /** Two sentences a person can act on: what happened, and what to do. */
  summary: string;
  evidence: Evidence[];
  similar: Similar | null;
  nextActions: NextAction[];
  /**
   * When the trouble is in a child run (ctx.child): the runs from this one down to the innermost in
   * trouble, each with the entry that started the next; the culprit and evidence come from the last.
   */
  chain?: Array<{ workflow: string; key: string; status: string; entry?: string }>;
}

/** Knobs of a diagnosis; the defaults suit people. */
export interface DiagnoseOptions {
  /** A queue wait without a message for this long is stuck (default 24 h). */
  stuckAfterMs?: number;
  /** A sleep that ends further away than this is "far" (default 7 days). */
  farSleepMs?: number;
  /** A run retrying after this many failed attempts is in a retry storm (default 3). */
  stormAfterAttempts?: number;
  /** A due run no process claimed for this long is stalled (default 60 s). */
  overdueMs?: number;
  /** How far back similar failures are counted (default 7 days). */
  similarWindowMs?: number;
}

/** The thresholds a diagnosis uses unless told otherwise. */
export const DEFAULTS: Required<DiagnoseOptions> = {
  stuckAfterMs: 24 * 3_600_000,
  farSleepMs: 7 * 86_400_000,
  stormAfterAttempts: 3,
  overdueMs: 60_000,
  similarWindowMs: 7 * 86_400_000,
};

/** One signature counted across runs. */
export interface FailureGroup {
  signature: string;
  workflow: string;
  entry: string;
  errorName: string;
  /** The normalised message. */
  pattern: string;
  /** One message as recorded. */
  example: string;
  count: number;
  /** How many of them are still retrying (the rest failed). */
  retrying: number;
  firstSeen: string;
  lastSeen: string;
  /** Up to five run keys, most recent first. */
  keys: string[];
}

/** Failure signatures over a window. */
export interface FailureList {
  since: string;
  /** Failed or retrying runs in the window, in every group. */
  scanned: number;
  /** Always true: every failing run's signature is stored, so nothing is left out. */
  complete: boolean;
  failures: FailureGroup[];
}
