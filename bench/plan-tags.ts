// What `npm run bench` measures for tag filters (scenario t): engine.listRuns({ tags }) pages over 100,000
// tagged runs on SQLite and PostgreSQL, p50 and p95.

import { dec, int, table } from "./lib/format.js";
import type { Plan, Sizes } from "./plans.js";

export function planTags(z: Sizes): Plan {
  const runs = z.quick ? 10_000 : 100_000;
  const backends = ["sqlite", "postgres"] as const;
  return {
    id: "t",
    title: `(t) Tag filters over ${int(runs)} runs (engine.listRuns({ tags }))`,
    durabilities: ["normal"],
    subjects: ["waymark"],
    variants: backends.map((backend) => ({ id: backend, label: backend, params: { runs, backend } })),
    timeoutMs: 15 * 60_000,
    render(r) {
      const rows = backends.map((b) => {
        const m = r.get(b, "normal", "waymark");
        const err = r.error(b, "normal", "waymark");
        const name = b === "sqlite" ? "SQLite (WAL, synchronous=NORMAL)" : "PostgreSQL";
        if (err) return [name, `failed: ${err.split("\n")[0]}`, "", "", "", ""];
        return [
          name,
          dec(m?.oneP50, 2),
          dec(m?.oneP95, 2),
          dec(m?.twoP50, 2),
          dec(m?.twoP95, 2),
          int(m?.fillRunsPerSec),
        ];
      });
      return {
        markdown: [
          `### ${this.title}`,
          "",
          `${int(runs)} runs created through the store's batch path (1,000 per commit), each tagged customer (1,000 values) and region (5 values). An attached engine then reads the first page (50 runs) of one customer (${int(runs / 1000)} runs match) and of one customer in one region (${int(runs / 5000)} match), 50 calls each with a different customer; times in ms per call. No ANALYZE after the load: PostgreSQL reads a schema whose statistics autovacuum has not gathered yet (the query's shape does not depend on them).`,
          "",
          table(
            [
              "database",
              "1 tag p50 ms",
              "1 tag p95 ms",
              "2 tags p50 ms",
              "2 tags p95 ms",
              "runs created / s (batch path)",
            ],
            rows,
          ),
        ].join("\n"),
        targets: [],
      };
    },
  };
}
