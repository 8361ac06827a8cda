// Instruments keep their own totals and make their prom-client registry on first use (issue 21: a stdio server
// nobody scrapes never loads prom-client, and a step's records cost no prom-client work). The exposition is the
// one of prom-client's own metrics fed the same records from the start.

import { Counter, Histogram, Registry } from "prom-client";
import { expect, test } from "vitest";
import { Instruments } from "../../src/observability/instruments.js";

const C = { prom: "t_calls_total", otel: "t.calls", help: "Calls.", labels: ["tool"] } as const;
const H = { prom: "t_call_seconds", otel: "t.call", help: "Call time.", labels: ["tool"] } as const;
const BUCKETS = [0.01, 0.1, 1];

/** The same records into a prom-client registry made at the start, for comparison. */
async function eager(
  record: (add: (tool: string, n: number) => void, obs: (tool: string, s: number) => void) => void,
) {
  const registry = new Registry();
  const c = new Counter({ name: C.prom, help: C.help, labelNames: C.labels, registers: [registry] });
  const h = new Histogram({
    name: H.prom,
    help: H.help,
    labelNames: H.labels,
    buckets: BUCKETS,
    registers: [registry],
  });
  record(
    (tool, n) => c.inc({ tool }, n),
    (tool, s) => h.observe({ tool }, s),
  );
  return registry.metrics();
}

test("records made before the registry exists are in it: the same exposition as an eager registry", async () => {
  const i = new Instruments();
  const add = i.counter(C);
  const observe = i.histogram(H, BUCKETS);
  let sampled = 0;
  i.gauge({ prom: "t_open", otel: "t.open", help: "Open.", labels: ["kind"] }, () => {
    sampled++;
    return [[{ kind: "a" }, 3]];
  });
  add({ tool: "get_run" });
  add({ tool: "get_run" }, 2);
  add({ tool: "list_runs" }, 0); // not counted, as before
  observe({ tool: "get_run" }, 0.05);
  observe({ tool: "list_runs" }, -1); // clamped to 0
  expect(i.loaded).toBe(false);
  expect(sampled).toBe(0);

  const { body } = await i.scrape();
  expect(i.loaded).toBe(true);
  expect(sampled).toBe(1);
  const expected = await eager((a, o) => {
    a("get_run", 1);
    a("get_run", 2);
    o("get_run", 0.05);
    o("list_runs", 0);
  });
  expect(body).toBe(`${expected}\n# HELP t_open Open.\n# TYPE t_open gauge\nt_open{kind="a"} 3\n`);

  // Once made, records go straight in, and a metric declared now joins the registry.
  add({ tool: "get_run" });
  i.counter({ prom: "t_late_total", otel: "t.late", help: "Late.", labels: [] })({});
  const again = await i.registry.getSingleMetricAsString(C.prom);
  expect(again).toContain('t_calls_total{tool="get_run"} 4');
  expect(await i.registry.getSingleMetricAsString("t_late_total")).toContain("t_late_total 1");
});

test("any number of records without a scrape keeps prom-client unloaded and one total per series", async () => {
  const i = new Instruments();
  const add = i.counter(C);
  const observe = i.histogram(H, BUCKETS);
  const hot = Object.freeze({ tool: "x" });
  for (let n = 0; n < 50_000; n++) {
    add(hot);
    observe(hot, n % 3 === 0 ? 0.005 : 0.5);
  }
  add({ tool: "x" }, 5); // another object with the same values is the same series
  observe({ tool: "y" }, Number.NaN); // not a number: not recorded (prom-client would throw)
  expect(i.loaded).toBe(false);
  const { body } = await i.scrape();
  expect(body).toContain('t_calls_total{tool="x"} 50005');
  expect(body).toContain('t_call_seconds_bucket{le="0.01",tool="x"} 16667');
  expect(body).toContain('t_call_seconds_bucket{le="1",tool="x"} 50000');
  expect(body).toContain('t_call_seconds_count{tool="x"} 50000');
  expect(body).not.toContain('tool="y"');
});

test("a metric without labels shows zero before anything is recorded, as prom-client's do", async () => {
  const i = new Instruments();
  i.counter({ prom: "t_none_total", otel: "t.none", help: "None.", labels: [] });
  i.histogram({ prom: "t_none_seconds", otel: "t.none.s", help: "None.", labels: [] }, BUCKETS);
  const registry = new Registry();
  new Counter({ name: "t_none_total", help: "None.", registers: [registry] });
  new Histogram({ name: "t_none_seconds", help: "None.", buckets: BUCKETS, registers: [registry] });
  expect((await i.scrape()).body).toBe(await registry.metrics());
  // The JSON form too, but for prom-client's exemplar slots (null: we keep no exemplars).
  const plain = (v: unknown) => JSON.parse(JSON.stringify(v, (k, x) => (k === "exemplar" ? undefined : x)));
  expect(plain(await i.registry.getMetricsAsJSON())).toEqual(plain(await registry.getMetricsAsJSON()));
});
