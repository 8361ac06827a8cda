// What `npm run bench` measures: each scenario's subjects, sizes, durability settings, tables and targets.

import type { Durability, Metrics, Subject } from "./lib/common.js";
import { SUBJECT_LABEL } from "./lib/common.js";
import { dec, int, mark, ms, ratio, table, times } from "./lib/format.js";
import { mcpDatabasePath } from "./lib/mcp-db.js";
import { waymarkPragmas } from "./lib/pragmas.js";
import { planMillion } from "./plan-million.js";
import { planPrune } from "./plan-prune.js";
import { planRestart } from "./plan-restart.js";
import { planTags } from "./plan-tags.js";

export type Params = Record<string, number | string>;

export interface Variant {
  id: string;
  label: string;
  params: Params;
}

export interface Target {
  scenario: string;
  /** The variant whose Waymark run is profiled when this target is missed. */
  variant: string;
  what: string;
  measured: string;
  goal: string;
  ok: boolean | null;
}

/** Median figures by (variant, durability, subject), and errors of children that failed. */
export interface Results {
  get(variant: string, durability: Durability, subject: Subject): Metrics | undefined;
  error(variant: string, durability: Durability, subject: Subject): string | undefined;
}

export interface Plan {
  id: string;
  title: string;
  durabilities: Durability[];
  subjects: Subject[];
  variants: Variant[];
  /** Which subjects run in which variant (default: all). */
  runs?(variant: Variant, subject: Subject, durability: Durability): boolean;
  /** Sizes for one subject and setting (default: the variant's). */
  params?(variant: Variant, subject: Subject, durability: Durability): Params;
  /** Subjects measured once, under the first durability (no storage to sync). */
  durabilityFree?: Subject[];
  /** Template databases built once per (variant, subject) by a prepare child; a fixed path is kept (cache). */
  template?(variant: Variant, subject: Subject): "temp" | { cached: string } | null;
  flags?: string[];
  /** Per child (default 5 minutes); templates get `prepareTimeoutMs` (default 15). */
  timeoutMs?: number;
  prepareTimeoutMs?: number;
  render(r: Results): { markdown: string; targets: Target[] };
}

export interface Sizes {
  quick: boolean;
}

const DUR_LABEL: Record<Durability, string> = {
  normal: "WAL, synchronous=NORMAL (default: survives a process crash)",
  full: "WAL, synchronous=FULL (survives power loss)",
};

/** Rows of one subject per line; `cells` gets its figures (undefined when it did not run). */
/** A subject's row label; the in-memory peer has no storage to sync, so its figure is the same in both settings. */
function label(s: Subject, d: Durability): string {
  return s === "rivet-mem" && d === "full"
    ? `${SUBJECT_LABEL[s]}, no storage: same figure`
    : SUBJECT_LABEL[s];
}

function subjectRows(
  r: Results,
  variant: string,
  d: Durability,
  subjects: Subject[],
  cells: (m: Metrics | undefined, s: Subject) => string[],
): string[][] {
  return subjects.map((s) => {
    const m = r.get(variant, d, s);
    const err = r.error(variant, d, s);
    const row = [label(s, d), ...cells(m, s)];
    if (!m && err) row[1] = `failed: ${err.split("\n")[0]}`;
    return row;
  });
}

function section(title: string, intro: string, parts: string[]): string {
  return [`### ${title}`, "", intro, "", ...parts].join("\n");
}

// ---- (a) sequential -------------------------------------------------------------------------

function planA(z: Sizes): Plan {
  const steps = z.quick ? 2000 : 10_000;
  const subjects: Subject[] = ["waymark", "rivet-mem", "rivet-sqlite", "floor"];
  return {
    id: "a",
    title: `(a) One run, ${int(steps)} sequential trivial steps`,
    durabilities: ["normal", "full"],
    subjects,
    durabilityFree: ["rivet-mem"],
    variants: [{ id: "main", label: "", params: { steps } }],
    render(r) {
      const parts: string[] = [];
      const targets: Target[] = [];
      for (const d of this.durabilities) {
        const w = r.get("main", d, "waymark");
        parts.push(
          `${DUR_LABEL[d]}:`,
          "",
          table(
            ["", "steps/s", "µs per step", "Waymark is"],
            subjectRows(r, "main", d, subjects, (m, s) => [
              int(m?.stepsPerSec),
              dec(m?.usPerStep),
              s === "waymark" ? "" : times(w?.stepsPerSec, m?.stepsPerSec),
            ]),
          ),
          "",
        );
        if (d === "normal") {
          const rivet = ratio(w?.stepsPerSec, r.get("main", "normal", "rivet-mem")?.stepsPerSec);
          const floor = ratio(w?.stepsPerSec, r.get("main", "normal", "floor")?.stepsPerSec);
          targets.push(
            {
              scenario: "a",
              variant: "main",
              what: "sequential steps/s vs Rivet (in-memory)",
              measured: times(rivet, 1),
              goal: "≥ ×8",
              ok: Number.isFinite(rivet) ? rivet >= 8 : null,
            },
            {
              scenario: "a",
              variant: "main",
              what: "sequential steps/s vs the SQLite floor (one commit per step)",
              measured: times(floor, 1),
              goal: "above the floor (≥ ×1)",
              ok: Number.isFinite(floor) ? floor >= 1 : null,
            },
          );
        }
      }
      const w = r.get("main", "normal", "waymark");
      const f = r.get("main", "normal", "floor");
      if (w && f) {
        parts.push(
          `Per step, Waymark spends ${dec(w.usPerStep)} µs where the floor's commit alone takes ${dec(f.usPerStep)} µs: ` +
            `${dec(w.usPerStep! - f.usPerStep!)} µs of engine work per step (${int(w.commits)} commits for ${int(steps)} steps).`,
        );
      }
      return {
        markdown: section(
          this.title,
          "Every step waits for its own record, so each subject pays one commit per step; the floor is that commit alone (one INSERT of an entry row per transaction).",
          parts,
        ),
        targets,
      };
    },
  };
}

// ---- (b) concurrent -------------------------------------------------------------------------

function planB(z: Sizes): Plan {
  const runs = z.quick ? 200 : 1000;
  const subjects: Subject[] = ["waymark", "rivet-mem", "rivet-sqlite", "floor", "floor-grouped"];
  return {
    id: "b",
    title: `(b) ${int(runs)} runs × 10 steps, concurrently`,
    durabilities: ["normal", "full"],
    subjects,
    durabilityFree: ["rivet-mem"],
    variants: [{ id: "main", label: "", params: { runs, steps: 10 } }],
    render(r) {
      const parts: string[] = [];
      const targets: Target[] = [];
      for (const d of this.durabilities) {
        const w = r.get("main", d, "waymark");
        parts.push(
          `${DUR_LABEL[d]}:`,
          "",
          table(
            ["", "steps/s", "commits", "Waymark is"],
            subjectRows(r, "main", d, subjects, (m, s) => [
              int(m?.stepsPerSec),
              s === "waymark"
                ? `${int(m?.commits)} (${dec(m?.stepsPerCommit)} steps each)`
                : s === "floor"
                  ? "one per step"
                  : s === "floor-grouped"
                    ? "11 (the creates, then one per step round)"
                    : "",
              s === "waymark" ? "" : times(w?.stepsPerSec, m?.stepsPerSec),
            ]),
          ),
          "",
        );
        if (d === "normal") {
          const x = ratio(w?.stepsPerSec, r.get("main", "normal", "rivet-mem")?.stepsPerSec);
          targets.push({
            scenario: "b",
            variant: "main",
            what: `${int(runs)} × 10 concurrent steps/s vs Rivet (in-memory)`,
            measured: times(x, 1),
            goal: "≥ ×6",
            ok: Number.isFinite(x) ? x >= 6 : null,
          });
        }
      }
      return {
        markdown: section(
          this.title,
          "All runs start at once; a run's step waits for its own record. Rivet's engine commits each run's writes on their own (its driver API has no cross-workflow batch); the floor is one commit per step. \"Waymark's writes alone\" makes the SQL statements Waymark makes for this scenario (run inserts, entry upserts, lease checks, finishing updates) on a file Waymark's store created (its 16 indexes on runs, its triggers), grouped in one transaction per step round, with no engine code: the part of Waymark's time that is SQLite's.",
          parts,
        ),
        targets,
      };
    },
  };
}

// ---- (c) resume -----------------------------------------------------------------------------

function planC(z: Sizes): Plan {
  const recorded = z.quick ? 2000 : 10_000;
  const subjects: Subject[] = ["waymark", "rivet-mem", "rivet-sqlite", "floor"];
  return {
    id: "c",
    title: `(c) Resume of a run with ${int(recorded)} recorded steps`,
    durabilities: ["normal", "full"],
    subjects,
    durabilityFree: ["rivet-mem"],
    variants: [{ id: "main", label: "", params: { recorded } }],
    template: () => "temp",
    render(r) {
      const parts: string[] = [];
      const targets: Target[] = [];
      for (const d of this.durabilities) {
        const w = r.get("main", d, "waymark");
        parts.push(
          `${DUR_LABEL[d]}:`,
          "",
          table(
            ["", "to the first new step", "Waymark is"],
            subjectRows(r, "main", d, subjects, (m, s) => [
              ms(m?.resumeMs),
              s === "waymark" ? "" : times(m?.resumeMs, w?.resumeMs),
            ]),
          ),
          "",
        );
        if (d === "normal") {
          const x = ratio(r.get("main", "normal", "rivet-mem")?.resumeMs, w?.resumeMs);
          targets.push({
            scenario: "c",
            variant: "main",
            what: `resume of ${int(recorded)} steps vs Rivet (in-memory)`,
            measured: times(x, 1),
            goal: "≥ ×15",
            ok: Number.isFinite(x) ? x >= 15 : null,
          });
        }
      }
      return {
        markdown: section(
          this.title,
          "Waymark: from `registry.start()` on a copy of the stored database until the run's first unrecorded step begins (open, claim, load, replay). Rivet: from `runWorkflow()` on the stored KV until the same point. Floor: open the database and read the run's entry rows.",
          parts,
        ),
        targets,
      };
    },
  };
}

// ---- (d) history growth ---------------------------------------------------------------------

function planD(z: Sizes): Plan {
  const small = 1000;
  const large = z.quick ? 10_000 : 100_000;
  const subjects: Subject[] = ["waymark", "rivet-mem", "floor"];
  const window = z.quick ? 500 : 2000;
  return {
    id: "d",
    title: `(d) Per-step cost at ${int(small)} versus ${int(large)} recorded entries in one run`,
    durabilities: ["normal", "full"],
    subjects,
    durabilityFree: ["rivet-mem"],
    variants: [
      { id: "small", label: int(small), params: { recorded: small } },
      { id: "large", label: int(large), params: { recorded: large } },
    ],
    // Rivet takes milliseconds per step at 100,000 entries, and a FULL commit is an fsync: shorter windows.
    params: (v, s, d) => ({
      ...v.params,
      ...(s === "rivet-mem"
        ? { warm: 50, window: 100, windows: 3 }
        : d === "full"
          ? { warm: 500, window: window / 4, windows: 9 }
          : { warm: 3 * window, window, windows: 9 }),
    }),
    template: () => "temp",
    render(r) {
      const parts: string[] = [];
      const targets: Target[] = [];
      for (const d of this.durabilities) {
        const rows = subjects.map((s) => {
          const a = r.get("small", d, s);
          const b = r.get("large", d, s);
          const err = r.error("small", d, s) ?? r.error("large", d, s);
          if (!a && !b && err) return [label(s, d), `failed: ${err.split("\n")[0]}`, "", ""];
          return [label(s, d), dec(a?.usPerStep), dec(b?.usPerStep), times(b?.usPerStep, a?.usPerStep)];
        });
        parts.push(
          `${DUR_LABEL[d]}:`,
          "",
          table(["", `µs per step at ${int(small)}`, `at ${int(large)}`, "growth"], rows),
          "",
        );
        if (d === "normal") {
          const g = ratio(r.get("large", d, "waymark")?.usPerStep, r.get("small", d, "waymark")?.usPerStep);
          targets.push({
            scenario: "d",
            variant: "large",
            what: `per-step cost at ${int(large)} / at ${int(small)} entries`,
            measured: times(g, 1),
            goal: "≤ ×1.2",
            ok: Number.isFinite(g) ? g <= 1.2 : null,
          });
        }
      }
      return {
        markdown: section(
          this.title,
          `A template run with that many recorded steps (built once by each engine) is resumed; after ${int(3 * window)} new steps (warm-up), nine windows of ${int(window)} steps are timed and the median window kept (FULL: after 500, nine windows of ${int(window / 4)}; Rivet: after 50, three windows of 100, since each of its steps takes milliseconds at 100,000 entries). The floor commits single rows into a table already holding the run's rows. Rivet's SQLite driver is left out: it runs the same engine code, whose growth the in-memory row already shows, and would add minutes.`,
          parts,
        ),
        targets,
      };
    },
  };
}

// ---- (e) waiting runs -----------------------------------------------------------------------

function planE(z: Sizes): Plan {
  const runs = z.quick ? 5000 : 100_000;
  const cacheSize = Number(waymarkPragmas("normal").find(([k]) => k === "cache_size")?.[1] ?? 0);
  const cacheMB = Math.round(cacheSize < 0 ? -cacheSize / 1024 : (cacheSize * 4096) / 2 ** 20);
  const subjects: Subject[] = ["waymark", "rivet-mem", "rivet-sqlite", "floor"];
  return {
    id: "e",
    title: `(e) ${int(runs)} waiting runs`,
    durabilities: ["normal", "full"],
    subjects,
    durabilityFree: ["rivet-mem"],
    flags: ["--expose-gc"],
    timeoutMs: 10 * 60_000,
    variants: [{ id: "main", label: "", params: { runs } }],
    // Under FULL every single commit is an fsync (~1 ms here): the peer and the floor, which commit per run,
    // would take many minutes at full size, so they run fewer and their rates are compared.
    params: (v, s, d) =>
      d === "full" && s === "rivet-sqlite"
        ? { runs: Math.min(runs, 2000) }
        : d === "full" && s === "floor"
          ? { runs: Math.min(runs, 5000) }
          : v.params,
    render(r) {
      const parts: string[] = [];
      const targets: Target[] = [];
      for (const d of this.durabilities) {
        const w = r.get("main", d, "waymark");
        parts.push(
          `${DUR_LABEL[d]}:`,
          "",
          table(
            [
              "",
              "runs",
              "create",
              "created/s",
              "RSS over idle",
              "JS heap used / reserved over idle",
              "deliver",
              "delivered/s",
            ],
            subjectRows(r, "main", d, subjects, (m, s) => [
              int(m?.runs),
              ms(m?.createMs),
              `${int(m?.createPerSec)}${s !== "waymark" && m ? ` (Waymark ${times(w?.createPerSec, m.createPerSec)})` : ""}`,
              m?.rssMB === undefined ? "—" : `${dec(m.rssMB)} MB`,
              m?.heapMB === undefined ? "—" : `${dec(m.heapMB)} / ${dec(m.heapTotalMB)} MB`,
              ms(m?.deliverMs),
              `${int(m?.deliverPerSec)}${s !== "waymark" && m ? ` (Waymark ${times(w?.deliverPerSec, m.deliverPerSec)})` : ""}`,
            ]),
          ),
          "",
        );
        if (d === "normal") {
          targets.push({
            scenario: "e",
            variant: "main",
            what: `RSS of ${int(runs)} waiting runs over the idle process`,
            measured: w?.rssMB === undefined ? "—" : `${dec(w.rssMB)} MB`,
            goal: "< 50 MB",
            ok: w?.rssMB === undefined ? null : w.rssMB < 50,
          });
        }
      }
      return {
        markdown: section(
          this.title,
          `Create: every run started (1,000 calls in flight) until each waits for a message. RSS and JS heap: after a full GC, over the same process idle before the runs (RSS includes SQLite's page cache, up to ${cacheMB} MB with Waymark's \`cache_size\`). Deliver: one message to each (1,000 in flight) until every run completed. Rivet runs in its memory-free "yield" mode: a waiting run returns; a message is queued and the run executed again by the host code here. Its in-memory driver holds the histories in the heap by design.`,
          parts,
        ),
        targets,
      };
    },
  };
}

// ---- (f) MCP --------------------------------------------------------------------------------

function planF(z: Sizes): Plan {
  const runs = z.quick ? 4000 : 100_000;
  return {
    id: "f",
    title: `(f) MCP on a database of ${int(runs)} runs and ${int(runs * 10 + 2000)} history entries`,
    durabilities: ["normal"],
    subjects: ["waymark"],
    variants: [
      {
        id: "in-process",
        label: "in process",
        params: { runs, variant: "in-process", quick: z.quick ? 1 : 0 },
      },
      { id: "stdio", label: "over stdio", params: { runs, variant: "stdio", quick: z.quick ? 1 : 0 } },
      { id: "cold", label: "cold start", params: { runs, variant: "cold", quick: z.quick ? 1 : 0 } },
    ],
    template: () => ({ cached: mcpDatabasePath(runs) }),
    prepareTimeoutMs: 60 * 60_000,
    render(r) {
      const a = r.get("in-process", "normal", "waymark");
      const b = r.get("stdio", "normal", "waymark");
      const c = r.get("cold", "normal", "waymark");
      const row = (label: string, key: string) => [label, ms(a?.[key]), ms(b?.[key])];
      const errors = ["in-process", "stdio", "cold"]
        .map((v) => r.error(v, "normal", "waymark"))
        .filter(Boolean)
        .map((e) => `Failed: ${e!.split("\n")[0]}`);
      const parts = [
        table(
          ["call (median unless noted)", "in process", "over stdio"],
          [
            row("get_run (p50)", "getRunP50"),
            row("get_run (p95)", "getRunP95"),
            row("list_runs, first page (25 runs)", "listFirstP50"),
            row('list_runs, filtered page (workflow "order", status failed)', "listFilteredP50"),
            row("list_runs, the filtered page after it (cursor)", "listFilteredNextP50"),
            row("get_history, a run's first page", "historyFirstP50"),
            row("get_history, a page 1,500 entries into a 2,000-entry run", "historyDeepP50"),
          ],
        ),
        "",
        table(
          ["cold start: spawn to the first get_run answer", "median"],
          [
            ["`node dist/src/cli/main.js mcp --stdio --db ...` (built)", ms(c?.coldBuiltMs)],
            ["`node --import tsx src/cli/main.ts mcp --stdio --db ...` (mcp.json)", ms(c?.coldTsxMs)],
          ],
        ),
        "",
        ...errors,
      ];
      const listWorst = Math.max(b?.listFirstP50 ?? Number.NaN, b?.listFilteredP50 ?? Number.NaN);
      const targets: Target[] = [
        {
          scenario: "f",
          variant: "stdio",
          what: "get_run p50 over stdio",
          measured: ms(b?.getRunP50),
          goal: "< 2 ms",
          ok: b ? b.getRunP50! < 2 : null,
        },
        {
          scenario: "f",
          variant: "stdio",
          what: "list_runs page over stdio (worse of first and filtered)",
          measured: ms(listWorst),
          goal: "< 10 ms",
          ok: Number.isFinite(listWorst) ? listWorst < 10 : null,
        },
        {
          scenario: "f",
          variant: "cold",
          what: "stdio cold start to first answer (built CLI)",
          measured: ms(c?.coldBuiltMs),
          goal: "< 400 ms",
          ok: c ? c.coldBuiltMs! < 400 : null,
        },
      ];
      return {
        markdown: section(
          this.title,
          `Built once through the engine (${int(runs / 2)} orders, 1 in 50 failed at its 8th step, ${int(runs / 2)} invoices, 10 steps each, and one 2,000-step run) and cached in bench/.cache; each sample reads a fresh copy. "In process": an SDK client over an in-memory transport to \`createMcpServer\` on an attached engine. "Over stdio": an SDK client spawning the built CLI. Reads only: durability does not apply.`,
          parts,
        ),
        targets,
      };
    },
  };
}

// ---- PostgreSQL -----------------------------------------------------------------------------

function planPg(z: Sizes): Plan {
  const seqSteps = z.quick ? 200 : 1000;
  const concRuns = z.quick ? 50 : 200;
  const procRuns = z.quick ? 200 : 800;
  const procs = z.quick ? [1, 2] : [1, 2, 4];
  const procVariants = (by: "result" | "events") =>
    procs.map((p) => ({
      id: `procs${p}-${by}`,
      label: `${p} engine process${p > 1 ? "es" : ""}`,
      params: { runs: procRuns, steps: 10, variant: "procs", procs: p, await: by },
    }));
  return {
    id: "pg",
    title: "PostgreSQL: Waymark and DBOS on one database",
    durabilities: ["normal"],
    subjects: ["waymark", "dbos", "floor"],
    variants: [
      {
        id: "seq",
        label: `1 run × ${int(seqSteps)} steps`,
        params: { runs: 1, steps: seqSteps, variant: "seq" },
      },
      {
        id: "conc",
        label: `${int(concRuns)} runs × 10 steps`,
        params: { runs: concRuns, steps: 10, variant: "conc" },
      },
      ...procVariants("result"),
      ...procVariants("events"),
    ],
    runs: (v, s) => s === "waymark" || !v.id.startsWith("procs"),
    render(r) {
      const targets: Target[] = [];
      const rows = ["seq", "conc"].map((id) => {
        const v = this.variants.find((x) => x.id === id)!;
        const w = r.get(id, "normal", "waymark");
        const d = r.get(id, "normal", "dbos");
        const f = r.get(id, "normal", "floor");
        const x = ratio(w?.stepsPerSec, d?.stepsPerSec);
        targets.push({
          scenario: "pg",
          variant: id,
          what: `PostgreSQL ${v.label}: steps/s vs DBOS`,
          measured: times(x, 1),
          goal: "≥ ×3",
          ok: Number.isFinite(x) ? x >= 3 : null,
        });
        const err = ["waymark", "dbos", "floor"]
          .map((s) => r.error(id, "normal", s as Subject))
          .find(Boolean);
        return [
          v.label,
          int(w?.stepsPerSec),
          int(d?.stepsPerSec),
          `${times(x, 1)} ${mark(targets.at(-1)!.ok)}`,
          `${int(f?.stepsPerSec)}${err ? ` (failed: ${err.split("\n")[0]})` : ""}`,
          times(w?.stepsPerSec, f?.stepsPerSec),
        ];
      });
      const procRows = procs.map((p) => {
        const a = r.get(`procs${p}-result`, "normal", "waymark");
        const b = r.get(`procs${p}-events`, "normal", "waymark");
        const a1 = r.get("procs1-result", "normal", "waymark");
        const b1 = r.get("procs1-events", "normal", "waymark");
        return [
          `${p} engine process${p > 1 ? "es" : ""}`,
          `${int(a?.stepsPerSec)} (${times(a?.stepsPerSec, a1?.stepsPerSec)})`,
          `${int(b?.stepsPerSec)} (${times(b?.stepsPerSec, b1?.stepsPerSec)})`,
        ];
      });
      return {
        markdown: section(
          this.title,
          `Both on the same PostgreSQL database, each in its own schema (\`waymark_bench\`, \`dbos_bench\`), dropped before every sample; the same trivial workflows (DBOS: \`registerWorkflow\` + \`runStep\`, started with \`startWorkflow\`, awaited with \`getResult\`). The floor: one autocommit INSERT of an entry row per step (one round trip and one commit), runs concurrently on a pool of 10 connections. Several engine processes: ${int(procRuns)} runs × 10 steps split evenly across processes sharing one schema, started together, steps/s from the first start to the last finish; each process awaits its runs with \`handle.result()\`, or by counting "completed" run events (\`engine.on\`).`,
          [
            table(
              [
                "workload",
                "Waymark steps/s",
                "DBOS steps/s",
                "Waymark is (target ×3)",
                "PostgreSQL floor steps/s",
                "Waymark vs floor",
              ],
              rows,
            ),
            "",
            table(
              ["Waymark, one schema", "steps/s, awaiting result()", "steps/s, awaiting run events"],
              procRows,
            ),
          ],
        ),
        targets,
      };
    },
  };
}

export function plans(z: Sizes): Plan[] {
  return [
    planA(z),
    planB(z),
    planC(z),
    planD(z),
    planE(z),
    planF(z),
    planPg(z),
    planPrune(z),
    planTags(z),
    planRestart(z),
    planMillion(z),
  ];
}
