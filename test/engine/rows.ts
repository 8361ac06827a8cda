// Plain store rows for tests of pure engine parts (plans, checks) that need no database.

import type { EntryRow, RunRow } from "../../src/storage/store.js";

/** A run row of workflow "wf", key "k", version 1, with the fields given. */
export function runRow(over: Partial<RunRow> = {}): RunRow {
  return {
    id: 1,
    workflow: "wf",
    key: "k",
    version: 1,
    status: "failed",
    input: null,
    initialState: "{}",
    state: "{}",
    output: null,
    error: null,
    waiting: null,
    waitQueues: null,
    wakeAt: null,
    owner: null,
    leaseUntil: null,
    createdAt: 0,
    updatedAt: 0,
    finishedAt: null,
    failureSignature: null,
    traceContext: null,
    parentRunId: null,
    waitRuns: null,
    concurrencyKey: null,
    concurrencyLimit: null,
    queuedAt: null,
    ...over,
  };
}

/** Entry rows with seqs counting up from 1 (a new factory per test); a completed step's output is its seq. */
export function entryRows() {
  let seq = 0;
  return (
    scope: string,
    ordinal: number,
    name: string,
    kind: string,
    status: string,
    over: Partial<EntryRow> = {},
  ): EntryRow => {
    seq++;
    return {
      runId: 1,
      seq,
      scope,
      ordinal,
      name,
      kind,
      status,
      startedAt: seq,
      endedAt: status === "completed" || status === "failed" ? seq : null,
      input: null,
      output: status === "completed" && kind === "step" ? JSON.stringify(seq) : null,
      error: null,
      attempts: kind === "step" ? JSON.stringify([{ n: 1, startedAt: seq, status }]) : null,
      detail: null,
      stateSeq: null,
      stateDiff: null,
      ...over,
    };
  };
}
