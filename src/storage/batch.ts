// What one commit writes: the batch of creates, inserts and patches a turn of the engine builds, and its answer.

import type { EntryRow, RejectionRow, RunRow, RunStatus, TagRow } from "./rows.js";

export interface CreateRun {
  workflow: string;
  key: string;
  version: number;
  input: string | null;
  initialState: string;
  now: number;
  /** Claim it for this owner at once (the creating engine runs it) or leave it for the scheduler. */
  owner: string | null;
  leaseUntil: number | null;
  /** The run's trace (a W3C traceparent), when a tracer is registered. */
  traceContext?: string | null;
  /** The run starting this one with ctx.child. */
  parentRunId?: number | null;
  /**
   * The run's concurrency key value and limit (workflow({ concurrency })); such a run is never claimed at
   * creation (owner is ignored): it starts pending and the scheduler's claim gives it a slot.
   */
  concurrency?: { key: string; limit: number } | null;
  /** Tags stored with the run when this creates it (a run that exists keeps its own). */
  tags?: Record<string, string>;
}

export interface CreateResult {
  run: RunRow;
  created: boolean;
}

export interface NewMessage {
  runId: number;
  queue: string;
  body: string;
  idempotencyKey: string | null;
  now: number;
}

export interface MessageResult {
  id: number;
  /** True when the idempotency key had been used: nothing new was stored. */
  duplicate: boolean;
}

/** A partial update of one run; only the fields present are written. */
export interface RunPatch {
  id: number;
  status?: RunStatus;
  state?: string;
  output?: string | null;
  error?: string | null;
  waiting?: string | null;
  waitQueues?: string | null;
  wakeAt?: number | null;
  owner?: string | null;
  leaseUntil?: number | null;
  version?: number;
  updatedAt?: number;
  finishedAt?: number | null;
  failureSignature?: string | null;
  traceContext?: string | null;
  waitRuns?: string | null;
}

/** Everything a turn of the engine writes, committed in one transaction. */
export interface WriteBatch {
  now: number;
  creates: CreateRun[];
  messages: NewMessage[];
  entries: EntryRow[];
  /** Entries removed by seq (a replay's discarded entries, a loop's compacted iterations); applied before `entries`. */
  deleteEntries: Array<{ runId: number; seqs: number[] }>;
  consume: Array<{ messageId: number; runId: number; bySeq: number }>;
  /** Put consumed messages back on their queues (replay). */
  unconsume: number[];
  runs: RunPatch[];
  /** Requests carried out (or refused), with what happened as JSON. */
  requestsDone: Array<{ id: number; result: string }>;
  requests: Array<{ runId: number; kind: string; args: string }>;
  rejections: Array<Omit<RejectionRow, "id">>;
  /** Tags set on existing runs (step.tag): a name the run already has takes the new value. */
  tags: TagRow[];
  /** Runs this batch writes for as their lease owner; a run owned by someone else aborts the batch with LeaseLostError. */
  leases: Array<{ runId: number; owner: string }>;
}

/** A batch that writes nothing yet, at `now`, to fill in. */
export function emptyBatch(now: number): WriteBatch {
  return {
    now,
    creates: [],
    messages: [],
    entries: [],
    deleteEntries: [],
    consume: [],
    unconsume: [],
    runs: [],
    requestsDone: [],
    requests: [],
    rejections: [],
    tags: [],
    leases: [],
  };
}

export interface BatchResult {
  created: CreateResult[];
  messages: MessageResult[];
  /** Ids of the requests inserted, in order. */
  requests: number[];
}
