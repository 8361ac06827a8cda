// Traces through @opentelemetry/api (a no-op unless the application registers an SDK): one trace per run,
// a span per execution (claim to suspend or finish), a child span per step attempt and per wait.
//
// IMPORTANT: a run's trace context is stored with the run (runs.trace_context, a W3C traceparent), and every
// execution span is a child of it, so a run resumed by another process after a restart continues its trace.
// Times are the engine's clock (history's times), so spans line up with the entries they describe.
// Without a tracer provider registered every span would be a no-op: then an execution makes none at all (a
// step attempt's span, its context and their strings cost allocations on every step), and nothing is stored.

import {
  type Attributes,
  type Context,
  context,
  ProxyTracerProvider,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from "@opentelemetry/api";

/** The tracer every span of Waymark comes from (a proxy: it follows the provider registered later). */
const tracer = trace.getTracer("waymark");

/** The provider the API answers with while none is registered (a fresh proxy's delegate is the no-op one). */
const NOOP_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Whether an application registered a tracer provider (asked per execution: one registered later applies then). */
export function tracingEnabled(): boolean {
  const provider = trace.getTracerProvider();
  return !(provider instanceof ProxyTracerProvider) || provider.getDelegate() !== NOOP_PROVIDER;
}

/** What startRunTrace answers without a tracer provider: no span, nothing to store. */
const UNTRACED: RunStart = { traceparent: null, created() {} };

/** Attribute names (one namespace, so they are easy to query). */
export const ATTR = {
  workflow: "waymark.workflow",
  key: "waymark.run.key",
  runId: "waymark.run.id",
  version: "waymark.run.version",
  status: "waymark.run.status",
  owner: "waymark.owner",
  path: "waymark.entry.path",
  kind: "waymark.entry.kind",
  attempt: "waymark.step.attempt",
  attemptStatus: "waymark.step.status",
  /** On a failed attempt: another follows after the backoff. */
  willRetry: "waymark.step.will_retry",
  queue: "waymark.queue",
  outcome: "waymark.wait.outcome",
} as const;

/** The W3C traceparent of a span, or null when it has no valid context (no SDK registered). */
export function traceparentOf(span: Span): string | null {
  const sc = span.spanContext();
  if (!trace.isSpanContextValid(sc)) return null;
  return `00-${sc.traceId}-${sc.spanId}-${sc.traceFlags & 1 ? "01" : "00"}`;
}

/** The context a stored traceparent stands for (a remote parent), or null when there is none or it is malformed. */
export function contextOf(traceparent: string | null | undefined): Context | null {
  const m = traceparent ? /^00-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})$/.exec(traceparent) : null;
  if (!m) return null;
  const sc = { traceId: m[1]!, spanId: m[2]!, traceFlags: Number.parseInt(m[3]!, 16) & 1, isRemote: true };
  return trace.isSpanContextValid(sc) ? trace.setSpanContext(ROOT_CONTEXT, sc) : null;
}

/** Which run a span is about. */
export interface TracedRun {
  readonly id: number;
  readonly workflow: string;
  readonly key: string;
  readonly version: number;
}

function runAttributes(run: TracedRun): Attributes {
  return {
    [ATTR.workflow]: run.workflow,
    [ATTR.key]: run.key,
    [ATTR.runId]: run.id,
    [ATTR.version]: run.version,
  };
}

/** A run's trace opened before the store says whether the run is new: its traceparent, and how to finish it. */
export interface RunStart {
  /** What to store with the run (null without an SDK). */
  readonly traceparent: string | null;
  /** The run was created with this id: the start span gets it and is recorded. */
  created(runId: number): void;
}

/**
 * Opens a run's trace when it may be created: a short span under the caller's active context (an HTTP request
 * that started the run, say), whose traceparent is stored with the run. The span is recorded only when
 * `created` is called; a run that already existed leaves it unended, so no SDK exports it.
 */
export function startRunTrace(workflow: string, key: string, version: number, now: number): RunStart {
  if (!tracingEnabled()) return UNTRACED;
  const span = tracer.startSpan(
    `start ${workflow}`,
    {
      kind: SpanKind.PRODUCER,
      startTime: now,
      attributes: { [ATTR.workflow]: workflow, [ATTR.key]: key, [ATTR.version]: version },
    },
    context.active(),
  );
  return {
    traceparent: traceparentOf(span),
    created(runId) {
      span.setAttribute(ATTR.runId, runId);
      span.end(now);
    },
  };
}

/** A span that ends once, with an outcome and perhaps an error recorded as an exception event. */
export class EntrySpan {
  private ended = false;
  /** The context with this span active (what code inside it sees). */
  readonly context: Context;

  constructor(
    readonly span: Span,
    parent: Context,
  ) {
    this.context = trace.setSpan(parent, span);
  }

  /** This span's traceparent (a child run stores its caller's span as the parent of its own trace). */
  get traceparent(): string | null {
    return traceparentOf(this.span);
  }

  /** Runs `fn` with this span active, so spans the application opens inside it (fetch, SQL) nest under it. */
  run<T>(fn: () => T): T {
    return context.with(this.context, fn);
  }

  /** Ends the span at `now` with `attributes`; an error is recorded as an exception event and sets status ERROR. */
  end(now: number, attributes: Attributes, error?: unknown): void {
    if (this.ended) return;
    this.ended = true;
    this.span.setAttributes(attributes);
    if (error !== undefined) {
      this.span.recordException(
        error instanceof Error ? error : { name: "Error", message: String(error) },
        now,
      );
      this.span.setStatus({
        code: SpanStatusCode.ERROR,
        message: error instanceof Error ? error.message : String(error),
      });
    }
    this.span.end(now);
  }
}

/** The spans of one execution of a run: its own, and its step attempts' and waits' under it. */
export class RunTrace {
  private readonly root: EntrySpan;
  private readonly attributes: Attributes;
  /** Set when the run had no stored trace context: the execution's own, to store with the run. */
  readonly adopted: string | null;

  constructor(run: TracedRun, traceContext: string | null, owner: string, now: number) {
    const stored = contextOf(traceContext);
    this.attributes = runAttributes(run);
    const span = tracer.startSpan(
      `run ${run.workflow}`,
      { kind: SpanKind.CONSUMER, startTime: now, attributes: this.attributes },
      stored ?? context.active(),
    );
    span.setAttribute(ATTR.owner, owner);
    this.root = new EntrySpan(span, stored ?? context.active());
    this.adopted = stored ? null : traceparentOf(span);
  }

  /** Runs the workflow's code with the execution's span active. */
  run<T>(fn: () => T): T {
    return this.root.run(fn);
  }

  /**
   * A child span for one entry of the run (a step attempt, a wait, a child run), started at `startedAt`.
   * A child run stores the returned span's `traceparent` as its own trace context, so its trace hangs here.
   */
  entry(kind: string, path: string, startedAt: number): EntrySpan {
    // No object spreads here: this runs once per step attempt, SDK or not, and V8 spreads cost microseconds.
    const span = tracer.startSpan(
      `${kind} ${path}`,
      { startTime: startedAt, attributes: this.attributes },
      this.root.context,
    );
    if (span.isRecording()) {
      span.setAttribute(ATTR.kind, kind);
      span.setAttribute(ATTR.path, path);
    }
    return new EntrySpan(span, this.root.context);
  }

  /** A span for one attempt of a step; its function runs inside it (EntrySpan.run). */
  attempt(path: string, n: number, startedAt: number): EntrySpan {
    const entry = this.entry("step", path, startedAt);
    entry.span.setAttribute(ATTR.attempt, n);
    return entry;
  }

  /** Records a wait that is over (a sleep, a queue wait) as a span from when it began to `endedAt`. */
  wait(kind: string, path: string, startedAt: number, endedAt: number, attributes: Attributes): void {
    this.entry(kind, path, startedAt).end(endedAt, attributes);
  }

  /** Ends the execution: the run's status now (suspended, finished or stopped), its error if it failed. */
  end(status: string, now: number, error?: unknown): void {
    this.root.end(now, { [ATTR.status]: status }, error);
  }
}
