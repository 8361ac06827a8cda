// What `npm run bench` measures on a database with a million runs (scenario g): MCP tools over stdio, p50/p95,
// and first paint of the inspector's runs list and of a failed run's page in headless Chromium.

import { dec, int, ms, table } from "./lib/format.js";
import { millionDatabasePath } from "./lib/million-db.js";
import type { Plan, Sizes, Target } from "./plans.js";

const CALLS: Array<[string, string, number]> = [
  ["list_runs, first page", "listFirst", 10],
  ["list_runs by workflow", "listWorkflow", 10],
  ["list_runs by status", "listStatus", 10],
  ["list_runs by error text", "listError", 10],
  ["list_runs by error text no run holds", "listErrorRare", 10],
  ["list_runs by error text of 2 characters no run holds", "listErrorShortRare", 10],
  ["list_runs by error text of 1 character", "listErrorShort", 10],
  ["list_runs in a time window", "listTime", 10],
  ["list_failures (complete)", "failures", 50],
  ["get_run", "getRun", 10],
  ["get_history, first page", "history", 10],
  ["diagnose_run, failed run", "diagnose", 50],
];

/** Inspector pages timed in Chromium: what, metric key, target p50 (ms). */
const PAINTS: Array<[string, string, number]> = [
  ["inspector runs list, first paint", "paintRuns", 1000],
  ["inspector failed run's page (deep link), first paint", "paintRun", 1000],
];

/** The API calls a page made before it painted, each as the median ms from navigation to its answer. */
function waterfall(m: Record<string, number> | undefined, key: string): string {
  if (!m) return "–";
  const prefix = `${key}Api:`;
  const calls = Object.entries(m)
    .filter(([k]) => k.startsWith(prefix))
    .sort((a, b) => a[1] - b[1])
    .map(([k, at]) => `${k.slice(prefix.length)} ${ms(at)}`);
  return calls.length ? calls.join(", ") : "–";
}

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
      for (const [what, key, goal] of PAINTS)
        targets.push({
          scenario: "g",
          variant: "stdio",
          what: `${what} p50 (Chromium)`,
          measured: ms(m?.[`${key}P50`]),
          goal: `< ${goal} ms`,
          ok: m ? m[`${key}P50`]! < goal : null,
        });
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
          "",
          "The inspector on the same file, served by the built CLI (`waymark mcp --http 127.0.0.1:0 --db FILE`) and opened in headless Chromium: first paint from navigation to the frame after the first runs row (runs list) or the first timeline row (a failed run's page opened by its link), each in a fresh context (no cache), 5 samples after one warm-up.",
          "",
          table(
            [
              "page",
              "p50",
              "p95",
              "target p50",
              "API calls before the paint (median ms from navigation to answer)",
            ],
            PAINTS.map(([what, key, goal]) => [
              what,
              ms(m?.[`${key}P50`]),
              ms(m?.[`${key}P95`]),
              `< ${goal} ms`,
              waterfall(m, key),
            ]),
          ),
        ].join("\n"),
        targets,
      };
    },
  };
}
