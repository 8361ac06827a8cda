// Instruments that record each number twice: into running totals of their own, exposed through a prom-client
// registry (served as /metrics), and through @opentelemetry/api metrics (a no-op unless the application
// registers a meter provider).
//
// A step records a counter and a histogram, so recording must cost next to nothing: each series keeps its
// totals in plain numbers (found by the label object's identity, the engine passes the same frozen objects),
// and prom-client reads them only when scraped, through metric sources registered in its registry (their
// `get()` answers what its own Counter and Histogram answer, so the exposition is the same). prom-client is
// loaded when its registry is first wanted (a scrape, `registry`): a process nobody scrapes never loads it.

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

/** One exported value, in the form prom-client's registry formats (what its own metrics' get() answer). */
interface ExportedValue {
  value: number;
  labels: Record<string, string | number>;
  metricName?: string;
  sharedLabels?: Record<string, string>;
}

/**
 * The series of one metric by label values. The engine passes the same (frozen) label objects on its hot
 * paths, so a WeakMap by identity finds them without building a key; other objects are found by their values.
 */
class SeriesTable<L extends string, S> {
  private readonly byObject = new WeakMap<object, S>();
  private readonly byValues = new Map<string, { labels: LabelValues<L>; series: S }>();

  constructor(
    private readonly names: readonly L[],
    private readonly make: () => S,
  ) {
    if (names.length === 0) this.get({} as LabelValues<L>);
  }

  get(labels: LabelValues<L>): S {
    const known = this.byObject.get(labels);
    if (known) return known;
    let key = "";
    for (const n of this.names) key += `${String(labels[n])}\u0000`;
    let entry = this.byValues.get(key);
    if (!entry) {
      const copy = {} as LabelValues<L>;
      for (const n of this.names) copy[n] = labels[n];
      entry = { labels: copy, series: this.make() };
      this.byValues.set(key, entry);
    }
    this.byObject.set(labels, entry.series);
    return entry.series;
  }

  /** Every series with its labels, in the order they were first recorded. */
  entries(): IterableIterator<{ labels: LabelValues<L>; series: S }> {
    return this.byValues.values();
  }
}

interface HistogramSeries {
  /** Observations per bucket (not cumulative); the last one is above every bound. */
  counts: number[];
  sum: number;
  count: number;
}

/** A metric prom-client's registry reads (name, help, type and its values); registered in place of its own classes. */
interface MetricSource {
  name: string;
  help: string;
  type: "counter" | "histogram";
  aggregator: "sum";
  get(): Promise<{ name: string; help: string; type: string; values: ExportedValue[]; aggregator: "sum" }>;
  getForPromString(): Promise<{
    name: string;
    help: string;
    type: string;
    values: ExportedValue[];
    aggregator: "sum";
  }>;
  reset(): void;
}

function source(
  spec: MetricSpec<string>,
  type: "counter" | "histogram",
  values: (forText: boolean) => ExportedValue[],
  reset: () => void,
): MetricSource {
  const answer = (forText: boolean) =>
    Promise.resolve({
      name: spec.prom,
      help: spec.help,
      type,
      values: values(forText),
      aggregator: "sum" as const,
    });
  return {
    name: spec.prom,
    help: spec.help,
    type,
    aggregator: "sum",
    get: () => answer(false),
    getForPromString: () => answer(true),
    reset,
  };
}

/**
 * One set of instruments per engine (not prom-client's global default registry, so two engines in one process
 * do not collide), and the global OpenTelemetry meter "waymark", taken when the instruments are made: register
 * the meter provider before starting the engine.
 */
export class Instruments {
  private made: Registry | null = null;
  /** Each metric's registration, in the order they were declared (the order of the exposition). */
  private readonly makers: Array<(p: typeof PromClient, registry: Registry) => void> = [];
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
    return registry;
  }

  /** Declares a metric: registered now if the registry exists, else when it is made. */
  private declare(make: (p: typeof PromClient, registry: Registry) => void): void {
    this.makers.push(make);
    if (this.made) make(prom(), this.made);
  }

  /** Registers a source of our own in prom-client's registry (it reads sources through get()). */
  private declareSource(metric: MetricSource): void {
    this.declare((_, registry) => registry.registerMetric(metric as unknown as PromClient.Metric));
  }

  /** A counter: `add(labels, n)` adds n (1 by default). */
  counter<L extends string>(spec: MetricSpec<L>): (labels: LabelValues<L>, n?: number) => void {
    let table = new SeriesTable<L, { value: number }>(spec.labels, () => ({ value: 0 }));
    this.declareSource(
      source(
        spec,
        "counter",
        () => [...table.entries()].map(({ labels, series }) => ({ labels, value: series.value })),
        () => {
          table = new SeriesTable(spec.labels, () => ({ value: 0 }));
        },
      ),
    );
    const otel = this.meter.createCounter(spec.otel, { description: spec.help });
    return (labels, n = 1) => {
      if (n <= 0) return;
      table.get(labels).value += n;
      otel.add(n, labels);
    };
  }

  /** A histogram of seconds with the given bucket bounds: `observe(labels, seconds)`. */
  histogram<L extends string>(
    spec: MetricSpec<L>,
    buckets: number[],
  ): (labels: LabelValues<L>, seconds: number) => void {
    const bounds = [...buckets].sort((a, b) => a - b);
    const fresh = (): HistogramSeries => ({ counts: new Array(bounds.length + 1).fill(0), sum: 0, count: 0 });
    let table = new SeriesTable<L, HistogramSeries>(spec.labels, fresh);
    this.declareSource(
      source(
        spec,
        "histogram",
        (forText) => {
          const out: ExportedValue[] = [];
          const bucket = `${spec.prom}_bucket`;
          for (const { labels, series } of table.entries()) {
            // As prom-client's Histogram: `le` a label of its own (text) or among the series' labels (get()).
            const value = (le: number | string, v: number, metricName: string): ExportedValue =>
              forText
                ? { labels: le === "" ? {} : { le }, sharedLabels: labels, value: v, metricName }
                : { labels: le === "" ? { ...labels } : { le, ...labels }, value: v, metricName };
            let acc = 0;
            bounds.forEach((b, i) => {
              acc += series.counts[i]!;
              out.push(value(b, acc, bucket));
            });
            out.push(value("+Inf", series.count, bucket));
            out.push(value("", series.sum, `${spec.prom}_sum`));
            out.push(value("", series.count, `${spec.prom}_count`));
          }
          return out;
        },
        () => {
          table = new SeriesTable(spec.labels, fresh);
        },
      ),
    );
    const otel = this.meter.createHistogram(spec.otel, {
      description: spec.help,
      unit: "s",
      advice: { explicitBucketBoundaries: buckets },
    });
    return (labels, seconds) => {
      if (!Number.isFinite(seconds)) return;
      const v = Math.max(0, seconds);
      const series = table.get(labels);
      let i = 0;
      while (i < bounds.length && v > bounds[i]!) i++;
      series.counts[i]!++;
      series.sum += v;
      series.count++;
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
