// Instruments that record each number twice: into a prom-client registry of their own (served as /metrics)
// and through @opentelemetry/api metrics (a no-op unless the application registers a meter provider).

import { type Meter, metrics } from "@opentelemetry/api";
import { Counter, Gauge, Histogram, Registry } from "prom-client";

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
  readonly registry = new Registry();
  private readonly meter: Meter = metrics.getMeter("waymark");
  private readonly closers: Array<() => void> = [];

  /** A counter: `add(labels, n)` adds n (1 by default). */
  counter<L extends string>(spec: MetricSpec<L>): (labels: LabelValues<L>, n?: number) => void {
    const prom = new Counter({
      name: spec.prom,
      help: spec.help,
      labelNames: spec.labels,
      registers: [this.registry],
    });
    const otel = this.meter.createCounter(spec.otel, { description: spec.help });
    return (labels, n = 1) => {
      if (n <= 0) return;
      prom.inc(labels, n);
      otel.add(n, labels);
    };
  }

  /** A histogram of seconds with the given bucket bounds: `observe(labels, seconds)`. */
  histogram<L extends string>(
    spec: MetricSpec<L>,
    buckets: number[],
  ): (labels: LabelValues<L>, seconds: number) => void {
    const prom = new Histogram({
      name: spec.prom,
      help: spec.help,
      labelNames: spec.labels,
      buckets,
      registers: [this.registry],
    });
    const otel = this.meter.createHistogram(spec.otel, {
      description: spec.help,
      unit: "s",
      advice: { explicitBucketBoundaries: buckets },
    });
    return (labels, seconds) => {
      const v = Math.max(0, seconds);
      prom.observe(labels, v);
      otel.record(v, labels);
    };
  }

  /** A gauge read when scraped (or collected by OpenTelemetry) from `sample`, which may ask the store. */
  gauge<L extends string>(spec: MetricSpec<L>, sample: () => Promise<GaugeSample<L>> | GaugeSample<L>): void {
    new Gauge({
      name: spec.prom,
      help: spec.help,
      labelNames: spec.labels,
      registers: [this.registry],
      async collect() {
        const values = await sample();
        this.reset();
        for (const [labels, v] of values) this.set(labels, v);
      },
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
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
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
