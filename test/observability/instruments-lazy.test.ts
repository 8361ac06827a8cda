// Instruments make their prom-client registry on first use (issue 21: a stdio server nobody scrapes never loads
// prom-client). What was counted and observed before that is replayed into it, so the exposition is the one
// of a registry made at the start; past PENDING_LIMIT records the registry is made then.

import { Counter, Histogram, Registry } from "prom-client";
import { expect, test } from "vitest";
import { Instruments, PENDING_LIMIT } from "../../src/observability/instruments.js";

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

test("records before the registry exists are replayed into it: the same exposition as an eager registry", async () => {
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

test("the registry is made once PENDING_LIMIT records wait, so memory stays bounded without a scrape", async () => {
  const i = new Instruments();
  const add = i.counter(C);
  for (let n = 0; n < PENDING_LIMIT - 1; n++) add({ tool: "x" });
  expect(i.loaded).toBe(false);
  add({ tool: "x" });
  expect(i.loaded).toBe(true);
  expect(await i.registry.getSingleMetricAsString(C.prom)).toContain(
    `t_calls_total{tool="x"} ${PENDING_LIMIT}`,
  );
});
