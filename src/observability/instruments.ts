// Instruments that record each number twice: into a prom-client registry of their own (served as /metrics)
// and through @opentelemetry/api metrics (a no-op unless the application registers a meter provider).
//
// prom-client is loaded when its registry is first wanted (a scrape, `registry`), not at import: a process
// nobody scrapes (`waymark mcp --stdio`) starts without it. Until then, what the counters and histograms are
// told is kept in order and replayed into the registry when it is made (at most PENDING_LIMIT records: past
// that, the registry is made then), so a scrape shows the same numbers as if it had been there all along.

import { createRequire } from "node:module";
import { type Meter, metrics } from "@opentelemetry/api";
import type * as PromClient from "prom-client";
import type { Registry } from "prom-client";

const require = createRequire(import.meta.url);
let promClient: typeof PromClient | undefined;
/** prom-client, loaded on first use (a CommonJS package: loaded synchronously). */
function prom(): typeof PromClient {
  promClient ??= require("prom-client") as typeof PromClient;
  return promClient;
}

/** Most records kept before the registry exists; the next one makes it. */
export const PENDING_LIMIT = 10_000;

/** Names of one metric: Prometheus (snake_case, unit suffix) and OpenTelemetry (dotted). */
export interface MetricSpec<L extends string> {
  prom: string;
  otel: string;
  help: string;
  labels: readonly L[];
}

/** Label values of one series. */
export type LabelValues<L extends string> = Record<L, string>;

/** A sample of a gauge: its series and their values now. */
export type GaugeSample<L extends string> = Array<[LabelValues<L>, number]>;

/**
 * One registry per engine (not prom-client's global default, so two engines in one process do not collide),
 * and the global OpenTelemetry meter "waymark", taken when the instruments are made: register the meter
 * provider before starting the engine.
 */
export class Instruments {
  private made: Registry | null = null;
  /** Each metric's constructor, in the order they were declared (the order of the exposition). */
  private readonly makers: Array<(p: typeof PromClient, registry: Registry) => void> = [];
  /** Records told before the registry was made, oldest first. */
  private pending: Array<() => void> = [];
  private readonly meter: Meter = metrics.getMeter("waymark");
  private readonly closers: Array<() => void> = [];

  /** This engine's prom-client registry (made, and prom-client loaded, on first use). */
  get registry(): Registry {
    return this.made ?? this.make();
  }

  /** Whether prom-client's registry has been made yet (for tests). */
  get loaded(): boolean {
    return this.made !== null;
  }

  private make(): Registry {
    const p = prom();
    const registry = new p.Registry();
    this.made = registry;
    for (const m of this.makers) m(p, registry);
    const ops = this.pending;
    this.pending = [];
    for (const op of ops) op();
    return registry;
  }

  /** Declares a metric: made now if the registry exists, else when it is made. */
  private declare(make: (p: typeof PromClient, registry: Registry) => void): void {
    this.makers.push(make);
    if (this.made) make(prom(), this.made);
  }

  /** Runs a record now if the registry exists, else keeps it for then. */
  private record(op: () => void): void {
    if (this.made) {
      op();
      return;
    }
    this.pending.push(op);
    if (this.pending.length >= PENDING_LIMIT) this.make();
  }

  /** A counter: `add(labels, n)` adds n (1 by default). */
  counter<L extends string>(spec: MetricSpec<L>): (labels: LabelValues<L>, n?: number) => void {
    let counter!: PromClient.Counter<L>;
    this.declare((p, registry) => {
      counter = new p.Counter({
        name: spec.prom,
        help: spec.help,
        labelNames: spec.labels,
        registers: [registry],
      });
    });
    const otel = this.meter.createCounter(spec.otel, { description: spec.help });
    return (labels, n = 1) => {
      if (n <= 0) return;
      // Once the registry exists, straight in (no closure: this runs for every step).
      if (this.made) counter.inc(labels, n);
      else this.record(() => counter.inc(labels, n));
      otel.add(n, labels);
    };
  }

  /** A histogram of seconds with the given bucket bounds: `observe(labels, seconds)`. */
  histogram<L extends string>(
    spec: MetricSpec<L>,
    buckets: number[],
  ): (labels: LabelValues<L>, seconds: number) => void {
    let histogram!: PromClient.Histogram<L>;
    this.declare((p, registry) => {
      histogram = new p.Histogram({
        name: spec.prom,
        help: spec.help,
        labelNames: spec.labels,
        buckets,
        registers: [registry],
      });
    });
    const otel = this.meter.createHistogram(spec.otel, {
      description: spec.help,
      unit: "s",
      advice: { explicitBucketBoundaries: buckets },
    });
    return (labels, seconds) => {
      const v = Math.max(0, seconds);
      if (this.made) histogram.observe(labels, v);
      else this.record(() => histogram.observe(labels, v));
      otel.record(v, labels);
    };
  }

  /** A gauge read when scraped (or collected by OpenTelemetry) from `sample`, which may ask the store. */
  gauge<L extends string>(spec: MetricSpec<L>, sample: () => Promise<GaugeSample<L>> | GaugeSample<L>): void {
    this.declare((p, registry) => {
      new p.Gauge({
        name: spec.prom,
        help: spec.help,
        labelNames: spec.labels,
        registers: [registry],
        async collect() {
          const values = await sample();
          this.reset();
          for (const [labels, v] of values) this.set(labels, v);
        },
      });
    });
    const otel = this.meter.createObservableGauge(spec.otel, { description: spec.help });
    const callback = async (result: { observe(value: number, attributes: LabelValues<L>): void }) => {
      for (const [labels, v] of await sample()) result.observe(v, labels);
    };
    otel.addCallback(callback);
    this.closers.push(() => otel.removeCallback(callback));
  }

  /** The Prometheus text exposition of every metric, gauges sampled now. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    const registry = this.registry;
    return { contentType: registry.contentType, body: await registry.metrics() };
  }

  /** Stops OpenTelemetry from reading this engine's gauges (it is closed). */
  close(): void {
    for (const c of this.closers.splice(0)) c();
  }
}

/** Wraps an async reader so callers arriving while it runs share its answer (one store query per scrape). */
export function shared<T>(read: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | null = null;
  return () => {
    running ??= read().finally(() => {
      running = null;
    });
    return running;
  };
}
