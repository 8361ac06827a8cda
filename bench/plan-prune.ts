// What `npm run bench` measures for pruning (scenario p): runs deleted per second on SQLite and PostgreSQL.

import { int, table } from "./lib/format.js";
import type { Plan, Sizes } from "./plans.js";

export function planPrune(z: Sizes): Plan {
  const runs = z.quick ? 2000 : 20_000;
  const backends = ["sqlite", "postgres"] as const;
  return {
    id: "p",
    title: `(p) Pruning ${int(runs)} finished runs (waymark prune)`,
    durabilities: ["normal"],
    subjects: ["waymark"],
    variants: backends.map((backend) => ({ id: backend, label: backend, params: { runs, backend } })),
    render(r) {
      const rows = backends.map((b) => {
        const m = r.get(b, "normal", "waymark");
        const err = r.error(b, "normal", "waymark");
        return [
          b === "sqlite" ? "SQLite (WAL, synchronous=NORMAL)" : "PostgreSQL",
          err ? `failed: ${err.split("\n")[0]}` : int(m?.runsPerSec),
          int(m?.ms),
        ];
      });
      return {
        markdown: [
          `### ${this.title}`,
          "",
          `engine.prune({ olderThan: "1d" }) on an attached engine over ${int(runs)} completed runs, each with 5 step entries and a consumed message: 100 runs per transaction (entries, messages, requests, refusals, child links and schedules' last runs in it; SQLite then hands free pages back with incremental_vacuum). Retention in the scheduler deletes the same batches, one per pass.`,
          "",
          table(["database", "runs deleted / s", "total ms"], rows),
        ].join("\n"),
        targets: [],
      };
    },
  };
}
