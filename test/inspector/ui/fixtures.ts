// Data as the inspector's API answers it, for the panels' tests: a failed invoice with four attempts,
// its diagnosis, and an approval waiting on a queue.

import type { Diagnosis } from "../../../src/diagnosis/types.js";
import { isContainer, isMarker, isWait } from "../../../src/engine/entries.js";
import type { EntryBar, EntryWhole, HistoryAnswer, RunAnswer } from "../../../src/inspector/shapes.js";

export const T0 = Date.parse("2026-01-05T10:00:00Z");

/** An entry bar (a completed step unless told otherwise), with the flags the API derives from its kind. */
export function bar(id: number, path: string, more: Partial<EntryBar> = {}): EntryBar {
  const slash = path.lastIndexOf("/");
  return withFlags({
    id,
    path,
    scope: slash < 0 ? "" : path.slice(0, slash),
    name: slash < 0 ? path : path.slice(slash + 1),
    kind: "step",
    status: "completed",
    startedAt: T0 + id * 100,
    endedAt: T0 + id * 100 + 50,
    attempts: [{ n: 1, startedAt: T0 + id * 100, endedAt: T0 + id * 100 + 50, status: "completed" }],
    error: null,
    detail: {},
    ...more,
  });
}

/** An entry bar's container, wait and marker flags, from its kind as the API derives them. */
export function withFlags(e: Omit<EntryBar, "container" | "wait" | "marker">): EntryBar {
  return { ...e, container: isContainer(e.kind), wait: isWait(e.kind), marker: isMarker(e.kind) };
}

const failure = { name: "Error", message: "tax quote failed: 503" };

/** The demo's failed invoice: load-subtotal completed, calculate-tax failed after four attempts. */
export function failedRun(key = "tax-outage", can = { send: false, cancel: false, replay: true }): RunAnswer {
  return {
    parent: null,
    children: [],
    run: {
      id: 1,
      workflow: "invoiceActor",
      key,
      status: "failed",
      version: 1,
      createdAt: T0,
      updatedAt: T0 + 1_000,
      finishedAt: T0 + 1_000,
      error: {
        name: "StepFailedError",
        message: 'Step "calculate-tax" failed after 4 attempts',
        details: { step: "calculate-tax", cause: failure },
        stack: "StepFailedError: ...\n    at run",
      },
      waiting: null,
      tags: { customer: "c-9" },
      input: { invoice: 42 },
      state: { subtotal: 100 },
      output: null,
      wakeAt: null,
      executing: false,
    },
    waiting: [],
    queues: [],
    concurrency: null,
    can,
    rollback: null,
    serverNow: T0 + 2_000,
  };
}

export function failedHistory(): HistoryAnswer {
  const attempts = [1, 2, 3, 4].map((n) => ({
    n,
    startedAt: T0 + 200 + n * 100,
    endedAt: T0 + 250 + n * 100,
    status: "failed" as const,
    error: failure,
  }));
  return {
    entries: [
      bar(1, "load-subtotal"),
      bar(2, "calculate-tax", { status: "failed", attempts, error: failure, endedAt: T0 + 700 }),
    ],
    truncated: false,
    serverNow: T0 + 2_000,
  };
}

export function failedEntry(): EntryWhole {
  return {
    id: 2,
    path: "calculate-tax",
    scope: "",
    ordinal: 1,
    name: "calculate-tax",
    kind: "step",
    status: "failed",
    startedAt: T0 + 300,
    endedAt: T0 + 700,
    durationMs: 400,
    error: { ...failure, stack: "Error: tax quote failed: 503\n    at quote (tax.ts:3)" },
    attempts: failedHistory().entries[1]!.attempts.map((a) => ({ ...a, error: { ...failure } })),
    stateBefore: { subtotal: 100 },
    stateAfter: { subtotal: 100, tax: null },
    stateChange: undefined,
    detail: {},
  };
}

export const diagnosis: Diagnosis = {
  run: { workflow: "invoiceActor", key: "tax-outage", status: "failed", version: 1 },
  category: "step-failed",
  culprit: { id: 2, name: "calculate-tax", path: "calculate-tax", scope: "", kind: "step" },
  summary: "calculate-tax failed after 4 attempts: the tax API answered 503.",
  evidence: [
    { kind: "error", fact: "tax quote failed: 503", entry: 2, attempt: 4 },
    { kind: "attempt", fact: "4 attempts, all 503", entry: 2 },
  ],
  similar: null,
  nextActions: [
    { kind: "person", change: "Wait until the tax API is back." },
    {
      kind: "call",
      tool: "replay_run",
      args: { workflow: "invoiceActor", key: "tax-outage", fromStep: "calculate-tax", dryRun: true },
      why: "see what a replay would redo",
    },
    {
      kind: "call",
      tool: "replay_run",
      args: { workflow: "invoiceActor", key: "tax-outage", fromStep: "calculate-tax" },
      why: "replay it",
    },
    {
      kind: "call",
      tool: "wait_for_run",
      args: { workflow: "invoiceActor", key: "tax-outage" },
      why: "wait",
    },
  ],
};

/** The expense approval waiting for a message on "decisions", whose schema the process published. */
export function waitingRun(): RunAnswer {
  const run = failedRun("expense-42", { send: true, cancel: true, replay: true });
  return {
    ...run,
    run: {
      ...run.run,
      workflow: "approval",
      status: "waiting",
      finishedAt: null,
      error: null,
      waiting: [{ kind: "queue", entry: "await-decision", queue: "decisions", until: null }],
    },
    waiting: [
      {
        kind: "queue",
        entry: "await-decision",
        queue: "decisions",
        until: null,
        messageSchema: {
          type: "object",
          properties: { approve: { type: "boolean" }, by: { type: "string" } },
          required: ["approve", "by"],
        },
      },
    ],
    queues: [{ name: "decisions", schema: {} }],
  };
}
