// Table names and column lists shared by the PostgreSQL store's queries. Every name is schema-qualified.

export interface Tables {
  runs: string;
  entries: string;
  messages: string;
  requests: string;
  rejections: string;
  workflows: string;
  schedules: string;
  audit: string;
  plans: string;
  planRuns: string;
  runTags: string;
  failureCounts: string;
  /** Sequence names as SQL string literals (for nextval). */
  messagesSeq: string;
  requestsSeq: string;
  rejectionsSeq: string;
  runsSeq: string;
  auditSeq: string;
}

export function tables(schema: string): Tables {
  return {
    runs: `${schema}.runs`,
    entries: `${schema}.entries`,
    messages: `${schema}.messages`,
    requests: `${schema}.requests`,
    rejections: `${schema}.rejections`,
    workflows: `${schema}.workflows`,
    schedules: `${schema}.schedules`,
    audit: `${schema}.audit`,
    plans: `${schema}.bulk_plans`,
    planRuns: `${schema}.bulk_plan_runs`,
    runTags: `${schema}.run_tags`,
    failureCounts: `${schema}.failure_counts`,
    messagesSeq: `'${schema}.messages_id_seq'`,
    requestsSeq: `'${schema}.requests_id_seq'`,
    rejectionsSeq: `'${schema}.rejections_id_seq'`,
    runsSeq: `'${schema}.runs_id_seq'`,
    auditSeq: `'${schema}.audit_id_seq'`,
  };
}

/** Run columns as RunRow fields; `p` qualifies them (e.g. "r.") where a query joins another source. */
export const runColumns = (p = "") =>
  `${p}id, ${p}workflow, ${p}key, ${p}version, ${p}status, ${p}input, ${p}initial_state AS "initialState",
  ${p}state, ${p}output, ${p}error, ${p}waiting, ${p}wait_queues AS "waitQueues", ${p}wake_at AS "wakeAt",
  ${p}owner, ${p}lease_until AS "leaseUntil", ${p}created_at AS "createdAt", ${p}updated_at AS "updatedAt",
  ${p}finished_at AS "finishedAt", ${p}failure_signature AS "failureSignature",
  ${p}trace_context AS "traceContext", ${p}parent_run_id AS "parentRunId", ${p}wait_runs AS "waitRuns",
  ${p}concurrency_key AS "concurrencyKey", ${p}concurrency_limit AS "concurrencyLimit", ${p}queued_at AS "queuedAt"`;

export const ENTRY_COLUMNS = `run_id AS "runId", seq, scope, ordinal, name, kind, status, started_at AS "startedAt",
  ended_at AS "endedAt", input, output, error, attempts, detail, state_seq AS "stateSeq", state_diff AS "stateDiff"`;

export const MESSAGE_COLUMNS = `id, run_id AS "runId", queue, body, sent_at AS "sentAt",
  idempotency_key AS "idempotencyKey", consumed_at AS "consumedAt", consumed_by AS "consumedBy"`;

export const REQUEST_COLUMNS = `id, run_id AS "runId", kind, args, created_at AS "createdAt"`;

/** Run patch fields: column and SQL array type. */
export const PATCH_COLUMNS: Record<string, [column: string, type: string]> = {
  status: ["status", "text"],
  state: ["state", "text"],
  output: ["output", "text"],
  error: ["error", "text"],
  waiting: ["waiting", "text"],
  waitQueues: ["wait_queues", "text"],
  wakeAt: ["wake_at", "bigint"],
  owner: ["owner", "text"],
  leaseUntil: ["lease_until", "bigint"],
  version: ["version", "int"],
  updatedAt: ["updated_at", "bigint"],
  finishedAt: ["finished_at", "bigint"],
  failureSignature: ["failure_signature", "text"],
  traceContext: ["trace_context", "text"],
  waitRuns: ["wait_runs", "text"],
};

export const TERMINAL_SQL = "('completed', 'failed', 'cancelled')";

/** PostgreSQL text cannot hold NUL characters; free text from callers (not JSON) has them replaced. */
export function pgText(value: string): string;
export function pgText(value: string | null): string | null;
export function pgText(value: string | null): string | null {
  return value?.includes("\u0000") ? value.replaceAll("\u0000", "\uFFFD") : value;
}
