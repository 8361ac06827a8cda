// What `npm run bench` measures on a database with a million runs (scenario g): MCP tools over stdio, p50/p95.

import { dec, int, ms, table } from "./lib/format.js";
import { millionDatabasePath } from "./lib/million-db.js";
import type { Plan, Sizes, Target } from "./plans.js";

const CALLS: Array<[string, string, number]> = [
  ["list_runs, first page", "listFirst", 10],
  ["list_runs by workflow", "listWorkflow", 10],
  ["list_runs by status", "listStatus", 10],
  ["list_runs by error text", "listError", 10],
  ["list_runs in a time window", "listTime", 10],
  ["list_failures (complete)", "failures", 50],
  ["get_run", "getRun", 10],
  ["get_history, first page", "history", 10],
  ["diagnose_run, failed run", "diagnose", 50],
];

export function planMillion(z: Sizes): Plan {
  const runs = z.quick ? 20_000 : 1_000_000;
  return {
    id: "g",
    title: `(g) MCP over stdio on a database of ${int(runs)} runs and ${int(runs * 10)} entries`,
    durabilities: ["normal"],
    subjects: ["waymark"],
    variants: [{ id: "stdio", label: "over stdio", params: { runs } }],
    template: () => ({ cached: millionDatabasePath(runs) }),
    prepareTimeoutMs: 30 * 60_000,
    timeoutMs: 15 * 60_000,
    render(r) {
      const m = r.get("stdio", "normal", "waymark");
      const err = r.error("stdio", "normal", "waymark");
      const targets: Target[] = CALLS.map(([what, key, goal]) => ({
        scenario: "g",
        variant: "stdio",
        what: `${what} p50 over stdio`,
        measured: ms(m?.[`${key}P50`]),
        goal: `< ${goal} ms`,
        ok: m ? m[`${key}P50`]! < goal : null,
      }));
      targets.push(
        {
          scenario: "g",
          variant: "stdio",
          what: "stdio cold start on the million-run file",
          measured: ms(m?.coldMs),
          goal: "< 500 ms",
          ok: m ? m.coldMs! < 500 : null,
        },
        {
          scenario: "g",
          variant: "stdio",
          what: "file bytes per recorded entry",
          measured: dec(m?.bytesPerEntry, 0),
          goal: "<= 250",
          ok: m ? m.bytesPerEntry! <= 250 : null,
        },
      );
      const rows = CALLS.map(([what, key, goal]) => [
        what,
        ms(m?.[`${key}P50`]),
        ms(m?.[`${key}P95`]),
        `< ${goal} ms`,
      ]);
      return {
        markdown: [
          `### ${this.title}`,
          "",
          "Built once (80 engine-made seed runs, one per workflow and kind, cloned by SQL in transactions of 50,000 runs; 88% completed, 7% failed under 5 reasons, 3% waiting on a queue, 2% sleeping) and cached in bench/.cache. An SDK client spawns the built CLI; 25 calls each after one warm-up.",
          "",
          ...(err ? [`Failed: ${err.split("\n")[0]}`, ""] : []),
          table(["call", "p50", "p95", "target p50"], rows),
          "",
          `Cold start (median of 4 spawns to the first get_run answer): ${ms(m?.coldMs)}. File: ${dec(m?.bytesPerEntry, 0)} bytes per entry over ${int(m?.entries)} entries.`,
        ].join("\n"),
        targets,
      };
    },
  };
}
