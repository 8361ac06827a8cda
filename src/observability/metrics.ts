// The engine's metrics: what operators watch (runs by status, step outcomes and durations, commit latency,
// scheduler lag, messages waiting, leases, MCP calls), in Prometheus text and through OpenTelemetry.
// Metric names are listed in the README; keep them stable (dashboards and alerts use them).

import type { Registry } from "prom-client";
import { type PrunedCount, RUN_STATUSES, type Store } from "../storage/store.js";
import { Instruments, shared } from "./instruments.js";

/** What the metrics read from the engine when scraped. */
export interface MetricsSource {
  readonly store: Store;
  /** Runs this process holds the lease of right now. */
  held(): number;
  /** Workflows this process runs (their run counts are shown even when zero). */
  workflows(): Iterable<string>;
}

/** How a waiting code path was woken, for the scheduler lag histogram. */
export type LagKind = "sleep" | "retry" | "queue-timeout";

const NO_LABELS = Object.freeze({});
const SECONDS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];
const COMMIT_SECONDS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];
const LAG_SECONDS = [0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 5, 15, 60, 300, 3600];

/** The metrics of an engine as applications and the MCP layer see them. */
export interface WaymarkMetrics {
  /** Every metric in the Prometheus text format, gauges read from the store now (what /metrics serves). */
  scrape(): Promise<{ contentType: string; body: string }>;
  /** The prom-client registry holding them, this engine's own (Registry.merge it with the application's). */
  readonly registry: Registry;
  /** Counts an MCP tool call and its duration (the MCP server calls it for every tool). */
  mcpCall(tool: string, ok: boolean, seconds: number): void;
}

/** What an executing run reports (a verify execution, which runs nothing, gets NO_RUN_METRICS). */
export interface RunMetrics {
  /** A step attempt ended after `seconds`; `final` when the step ends with it (completed, or failed for good). */
  attempt(workflow: string, ok: boolean, seconds: number, final: boolean): void;
  /** A wake-up due at some time resumed its code `seconds` later. */
  late(kind: LagKind, seconds: number): void;
}

/** Reports nothing. */
export const NO_RUN_METRICS: RunMetrics = { attempt() {}, late() {} };

/** The label values a step attempt is counted under, per workflow. */
interface WorkflowLabels {
  readonly workflow: Readonly<{ workflow: string }>;
  readonly completed: Readonly<{ workflow: string; outcome: string }>;
  readonly failed: Readonly<{ workflow: string; outcome: string }>;
}

export class EngineMetrics implements RunMetrics, WaymarkMetrics {
  private readonly i = new Instruments();
  private readonly workflowLabels = new Map<string, WorkflowLabels>();
  private readonly stepsCompleted = this.i.counter({
    prom: "waymark_steps_completed_total",
    otel: "waymark.steps.completed",
    help: "Steps that completed (their record committed).",
    labels: ["workflow"],
  });
  private readonly stepsFailed = this.i.counter({
    prom: "waymark_steps_failed_total",
    otel: "waymark.steps.failed",
    help: "Steps that failed for good (retries used up, or a FatalError).",
    labels: ["workflow"],
  });
  private readonly attemptsFailed = this.i.counter({
    prom: "waymark_step_attempts_failed_total",
    otel: "waymark.step.attempts.failed",
    help: "Step attempts that threw or timed out, retried or not.",
    labels: ["workflow"],
  });
  private readonly stepDuration = this.i.histogram(
    {
      prom: "waymark_step_duration_seconds",
      otel: "waymark.step.duration",
      help: "How long each step attempt ran, by outcome (completed or failed).",
      labels: ["workflow", "outcome"],
    },
    SECONDS,
  );
  private readonly commitDuration = this.i.histogram(
    {
      prom: "waymark_commit_duration_seconds",
      otel: "waymark.commit.duration",
      help: "How long each group commit of the write queue took in the store.",
      labels: [],
    },
    COMMIT_SECONDS,
  );
  private readonly lag = this.i.histogram(
    {
      prom: "waymark_scheduler_lag_seconds",
      otel: "waymark.scheduler.lag",
      help: "How late a due wake-up (a sleep's end, a retry's backoff, a queue wait's timeout) resumed the run.",
      labels: ["kind"],
    },
    LAG_SECONDS,
  );
  private readonly takenOver = this.i.counter({
    prom: "waymark_leases_taken_over_total",
    otel: "waymark.leases.taken_over",
    help: "Runs whose lease this process took over from a dead process.",
    labels: [],
  });
  private readonly prunedRuns = this.i.counter({
    prom: "waymark_runs_pruned_total",
    otel: "waymark.runs.pruned",
    help: "Finished runs deleted by retention or engine.prune (waymark prune), by workflow and status.",
    labels: ["workflow", "status"],
  });
  private readonly mcpCalls = this.i.counter({
    prom: "waymark_mcp_calls_total",
    otel: "waymark.mcp.calls",
    help: "MCP tool calls by tool and outcome (ok, or error for an isError answer).",
    labels: ["tool", "outcome"],
  });
  private readonly mcpDuration = this.i.histogram(
    {
      prom: "waymark_mcp_call_duration_seconds",
      otel: "waymark.mcp.call.duration",
      help: "How long MCP tool calls took to answer.",
      labels: ["tool"],
    },
    SECONDS,
  );

  constructor(source: MetricsSource) {
    const runs = shared(() => source.store.countRuns());
    this.i.gauge(
      {
        prom: "waymark_runs",
        otel: "waymark.runs",
        help: "Runs in the database by workflow and status.",
        labels: ["workflow", "status"],
      },
      async () => {
        const totals = new Map<string, number>();
        const add = (workflow: string, status: string, n: number) => {
          const k = `${workflow}\u0000${status}`;
          totals.set(k, (totals.get(k) ?? 0) + n);
        };
        // Every status of every workflow, zero included, so series do not vanish when a status empties.
        const workflows = new Set(source.workflows());
        const counted = await runs();
        for (const c of counted) workflows.add(c.workflow);
        for (const w of workflows) for (const s of RUN_STATUSES) add(w, s, 0);
        for (const c of counted) add(c.workflow, c.status, Number(c.count));
        return [...totals].map(([k, n]) => {
          const [workflow, status] = k.split("\u0000") as [string, string];
          return [{ workflow, status }, n];
        });
      },
    );
    const messages = shared(() => source.store.pendingMessageCounts());
    this.i.gauge(
      {
        prom: "waymark_queue_messages_waiting",
        otel: "waymark.queue.messages.waiting",
        help: "Messages sent and not consumed yet, by workflow and queue.",
        labels: ["workflow", "queue"],
      },
      async () => (await messages()).map((m) => [{ workflow: m.workflow, queue: m.queue }, Number(m.count)]),
    );
    this.i.gauge(
      {
        prom: "waymark_leases_held",
        otel: "waymark.leases.held",
        help: "Runs this process holds the lease of (executing now).",
        labels: [],
      },
      () => [[{}, source.held()]],
    );
  }

  /** A step attempt ended after `seconds`; `final` when the step ends with it (completed, or failed for good). */
  attempt(workflow: string, ok: boolean, seconds: number, final: boolean): void {
    const labels = this.labelsOf(workflow);
    this.stepDuration(ok ? labels.completed : labels.failed, seconds);
    if (!ok) this.attemptsFailed(labels.workflow);
    if (ok) this.stepsCompleted(labels.workflow);
    else if (final) this.stepsFailed(labels.workflow);
  }

  /** One workflow's label objects, made once: this runs for every step attempt (never mutated). */
  private labelsOf(workflow: string): WorkflowLabels {
    let labels = this.workflowLabels.get(workflow);
    if (!labels) {
      labels = Object.freeze({
        workflow: Object.freeze({ workflow }),
        completed: Object.freeze({ workflow, outcome: "completed" }),
        failed: Object.freeze({ workflow, outcome: "failed" }),
      });
      this.workflowLabels.set(workflow, labels);
    }
    return labels;
  }

  /** A group commit took `seconds`. */
  commit(seconds: number): void {
    this.commitDuration(NO_LABELS, seconds);
  }

  /** A wake-up due at some time resumed its code `seconds` later. */
  late(kind: LagKind, seconds: number): void {
    this.lag({ kind }, seconds);
  }

  /** This process took over `n` runs from dead owners. */
  tookOver(n: number): void {
    this.takenOver({}, n);
  }

  /** Finished runs were deleted (retention, or engine.prune). */
  pruned(deleted: PrunedCount[]): void {
    for (const d of deleted) this.prunedRuns({ workflow: d.workflow, status: d.status }, d.count);
  }

  /** An MCP tool answered. */
  mcpCall(tool: string, ok: boolean, seconds: number): void {
    this.mcpCalls({ tool, outcome: ok ? "ok" : "error" });
    this.mcpDuration({ tool }, seconds);
  }

  get registry(): Registry {
    return this.i.registry;
  }

  /** Every metric in the Prometheus text format (the store is read for the gauges). */
  scrape(): Promise<{ contentType: string; body: string }> {
    return this.i.scrape();
  }

  close(): void {
    this.i.close();
  }
}
