// What `npm run bench` measures for a restart with many runs in flight (scenario r, bench/scenarios/r-restart.ts):
// Waymark on SQLite against Rivet's engine in memory and on SQLite.

import type { Subject } from "./lib/common.js";
import { SUBJECT_LABEL } from "./lib/common.js";
import { int, ms, ratio, table, times } from "./lib/format.js";
import type { Plan, Sizes, Target } from "./plans.js";
import { IN_FLIGHT, LEASE_MS } from "./scenarios/r-restart.js";

export function planRestart(z: Sizes): Plan {
  const runs = z.quick ? 1000 : 10_000;
  const subjects: Subject[] = ["waymark", "rivet-mem", "rivet-sqlite"];
  return {
    id: "r",
    title: `(r) Restart with ${int(runs)} runs in flight`,
    durabilities: ["normal"],
    subjects,
    variants: [{ id: "main", label: "", params: { runs } }],
    template: () => "temp",
    timeoutMs: 10 * 60_000,
    render(r) {
      const w = r.get("main", "normal", "waymark");
      const rows = subjects.map((s) => {
        const m = r.get("main", "normal", s);
        const err = r.error("main", "normal", s);
        if (!m && err) return [SUBJECT_LABEL[s], `failed: ${err.split("\n")[0]}`, "", "", "", "", ""];
        return [
          SUBJECT_LABEL[s],
          ms(m?.recordedMs),
          ms(m?.resumedMs),
          ms(m?.firstMs),
          int(m?.runsPerSec),
          ms(m?.cpuMs),
          s === "waymark" ? "" : times(m?.recordedMs, w?.recordedMs),
        ];
      });
      const targets: Target[] = (["rivet-mem", "rivet-sqlite"] as const).map((s) => {
        const x = ratio(r.get("main", "normal", s)?.recordedMs, w?.recordedMs);
        return {
          scenario: "r",
          variant: "main",
          what: `restart with ${int(runs)} runs in flight, to all recorded, vs ${SUBJECT_LABEL[s]}`,
          measured: times(x, 1),
          goal: "≥ ×1",
          ok: Number.isFinite(x) ? x >= 1 : null,
        };
      });
      const lines = [
        `Waymark is ${times(r.get("main", "normal", "rivet-mem")?.recordedMs, w?.recordedMs)} Rivet in memory and ${times(r.get("main", "normal", "rivet-sqlite")?.recordedMs, w?.recordedMs)} Rivet on SQLite (time until every run recorded its next step); in CPU time, ${times(r.get("main", "normal", "rivet-mem")?.cpuMs, w?.cpuMs)} and ${times(r.get("main", "normal", "rivet-sqlite")?.cpuMs, w?.cpuMs)}.`,
        ...(w?.startMs !== undefined
          ? [
              `Of Waymark's time, \`registry.start()\` itself took ${ms(w.startMs)}; its runs committed in ${int(w.commits)} transactions.`,
            ]
          : []),
      ];
      return {
        markdown: [
          `### ${this.title}`,
          "",
          `Each run of the endless workflow has recorded steps s0–s${IN_FLIGHT - 1} and is inside s${IN_FLIGHT} when its process is SIGKILLed (Waymark and Rivet on SQLite: a real process, killed once every run is in flight; Rivet in memory: its KV saved at that point). A fresh process then opens the stored state and runs every workflow on: Waymark by \`registry.start()\` (defaults, maxActiveRuns = ${int(runs)}), Rivet by \`runWorkflow()\` for every run at once. Times from opening (Rivet in memory: from the first runWorkflow) until every run has recorded s${IN_FLIGHT} (its next step), until every run has begun s${IN_FLIGHT} (resumed), and until the first recorded it. No lease wait is inside: the killed process's leases (${int(LEASE_MS)} ms) have lapsed before the clock starts, and Waymark takes a dead local owner's runs over at once anyway; on another machine it would first wait out the lease. CPU: the measuring process's user + system time over the same window. WAL, synchronous=NORMAL.`,
          "",
          table(
            [
              "",
              "all recorded their next step",
              "all resumed",
              "first recorded",
              "runs/s",
              "CPU (process)",
              "Waymark is",
            ],
            rows,
          ),
          "",
          ...lines,
        ].join("\n"),
        targets,
      };
    },
  };
}
