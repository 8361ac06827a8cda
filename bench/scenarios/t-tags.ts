// (t) Tag filters: engine.listRuns({ tags }) over 100,000 runs, each tagged customer (1,000 values) and region
// (5 values), on SQLite and PostgreSQL. The runs are created through the store's batch path (1,000 per commit,
// tags in the same commit, as getOrCreate stores them); then an attached engine reads the first page of one
// customer (100 runs) and of one customer in one region (20 runs), CALLS times each, a different customer
// each call; p50 and p95 of each.

import { attach, openStore } from "../../src/index.js";
import { emptyBatch } from "../../src/storage/store.js";
import { type ChildSpec, type Metrics, num, type ScenarioModule } from "../lib/common.js";
import { freshDatabase } from "./p-prune.js";

const CUSTOMERS = 1000;
const REGIONS = 5;
const CALLS = 50;
const PAGE = 50;

/** Run i's tags: customer i mod 1,000; region varies within a customer (20 runs per pair at 100,000). */
const tagsOf = (i: number) => ({
  customer: `c-${i % CUSTOMERS}`,
  region: `r-${(7 * (i % CUSTOMERS) + Math.floor(i / CUSTOMERS)) % REGIONS}`,
});

async function fill(database: string, runs: number, now: number): Promise<void> {
  const store = await openStore(database);
  for (let from = 0; from < runs; from += 1000) {
    const creates = Array.from({ length: Math.min(1000, runs - from) }, (_, k) => ({
      workflow: "order",
      key: `o-${from + k}`,
      version: 1,
      input: '{"amount":42}',
      initialState: "{}",
      now: now + from + k,
      owner: null,
      leaseUntil: null,
      tags: tagsOf(from + k),
    }));
    await store.commit({ ...emptyBatch(now), creates });
  }
  await store.close();
}

const quantile = (sorted: number[], q: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;

async function measure(spec: ChildSpec): Promise<Metrics> {
  const runs = num(spec.params, "runs");
  const database = await freshDatabase(spec, "tags");
  const t0 = performance.now();
  await fill(database, runs, Date.now() - 86_400_000);
  const fillMs = performance.now() - t0;
  const engine = await attach({ database });
  const perCustomer = runs / CUSTOMERS;
  const time = async (tags: (call: number) => Record<string, string>, expected: number) => {
    const out: number[] = [];
    for (let call = 0; call < CALLS; call++) {
      const started = performance.now();
      const page = await engine.listRuns({ tags: tags(call), limit: PAGE });
      out.push(performance.now() - started);
      if (page.runs.length !== Math.min(PAGE, expected))
        throw new Error(`tag page of ${JSON.stringify(tags(call))} has ${page.runs.length} runs`);
    }
    return out.sort((a, b) => a - b);
  };
  const customer = (call: number) => `c-${(call * 37) % CUSTOMERS}`;
  // Warm the statement caches once, as a server that has answered before would be.
  await engine.listRuns({ tags: { customer: "c-999" }, limit: PAGE });
  const one = await time((call) => ({ customer: customer(call) }), perCustomer);
  const two = await time(
    (call) => ({ customer: customer(call), region: tagsOf((call * 37) % CUSTOMERS).region }),
    perCustomer / REGIONS,
  );
  await engine.close();
  return {
    oneP50: quantile(one, 0.5),
    oneP95: quantile(one, 0.95),
    twoP50: quantile(two, 0.5),
    twoP95: quantile(two, 0.95),
    fillRunsPerSec: (runs * 1000) / fillMs,
  };
}

export const scenario: ScenarioModule = { measure: { waymark: measure } };
