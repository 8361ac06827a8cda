// `npm run bench`: every scenario of bench/plans.ts, Waymark beside its peers and the SQLite floor, each
// sample in a fresh process (bench/child.ts), medians printed and written to bench/results.md.
//
//   npm run bench                      the whole run (about 20 minutes), writes bench/results.md
//   npm run bench -- --quick           small sizes, one sample each, writes bench/.cache/results-quick.md
//   npm run bench -- --only a,b,pg     some scenarios (a b c d e f pg p t r; g is kept for a database with a million runs)
//   npm run bench -- --runs 5          samples per figure (default 3; --quick: 1)
//   npm run bench -- --no-profile      skip the CPU profiles taken where a target is missed
//   npm run bench -- --notes           only refresh the notes at the end of bench/results.md from bench/notes.md

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import {
  CACHE_DIR,
  type ChildSpec,
  type Durability,
  type Metrics,
  median,
  ROOT,
  type Subject,
} from "./lib/common.js";
import { mark, table } from "./lib/format.js";
import { describeMachine } from "./lib/machine.js";
import { profileTable, summarize } from "./lib/profile.js";
import { runChild } from "./lib/run-child.js";
import { type Plan, plans, type Results, type Target, type Variant } from "./plans.js";
import { PG_DATABASE } from "./scenarios/pg.js";

interface Args {
  quick: boolean;
  only: string[] | null;
  runs: number | null;
  profile: boolean;
  notes: boolean;
}

function parseArgs(argv: string[]): Args {
  const args: Args = { quick: false, only: null, runs: null, profile: true, notes: false };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i]!.split("=", 2) as [string, string | undefined];
    const value = () => inline ?? argv[++i] ?? "";
    if (flag === "--quick") args.quick = true;
    else if (flag === "--only") args.only = value().split(",").filter(Boolean);
    else if (flag === "--runs") args.runs = Number(value());
    else if (flag === "--no-profile") args.profile = false;
    else if (flag === "--notes") args.notes = true;
    else throw new Error(`bench: unknown option ${argv[i]} (see bench/main.ts)`);
  }
  return args;
}

const log = (line: string) => process.stderr.write(`${line}\n`);

class Store implements Results {
  private readonly samples = new Map<string, Metrics[]>();
  private readonly errors = new Map<string, string>();
  private static key(v: string, d: Durability, s: Subject) {
    return `${v}|${d}|${s}`;
  }
  add(v: string, d: Durability, s: Subject, m: Metrics) {
    const k = Store.key(v, d, s);
    this.samples.set(k, [...(this.samples.get(k) ?? []), m]);
  }
  fail(v: string, d: Durability, s: Subject, err: string) {
    this.errors.set(Store.key(v, d, s), err);
  }
  /** Medians of each figure over the samples; a durability-free subject answers for every setting. */
  constructor(private readonly plan: Plan) {}
  private resolve(v: string, d: Durability, s: Subject): string {
    return this.plan.durabilityFree?.includes(s)
      ? Store.key(v, this.plan.durabilities[0]!, s)
      : Store.key(v, d, s);
  }
  get(v: string, d: Durability, s: Subject): Metrics | undefined {
    const list = this.samples.get(this.resolve(v, d, s));
    if (!list?.length) return undefined;
    const out: Metrics = {};
    for (const name of Object.keys(list[0]!)) out[name] = median(list.map((m) => m[name]!));
    return out;
  }
  error(v: string, d: Durability, s: Subject): string | undefined {
    return this.errors.get(this.resolve(v, d, s));
  }
  raw() {
    return { samples: Object.fromEntries(this.samples), errors: Object.fromEntries(this.errors) };
  }
}

function paramsOf(plan: Plan, v: Variant, s: Subject, d: Durability) {
  return plan.params ? plan.params(v, s, d) : v.params;
}

function summaryLine(m: Metrics): string {
  return Object.entries(m)
    .slice(0, 4)
    .map(([k, v]) => `${k}=${Math.abs(v) >= 100 ? Math.round(v).toLocaleString("en") : v.toFixed(2)}`)
    .join(" ");
}

/** Builds the CLI for the stdio scenario; a failing build that still leaves dist/ is reported, not fatal. */
function build(): void {
  log("building the CLI (npm run build) for the stdio scenario...");
  try {
    execFileSync("npm", ["run", "build"], { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] });
  } catch (err) {
    if (!fs.existsSync(path.join(ROOT, "dist/src/cli/main.js"))) throw err;
    log("npm run build reported errors; using dist/ as it is.");
  }
}

async function runPlan(plan: Plan, tmp: string, samples: number): Promise<Store> {
  const store = new Store(plan);
  log(`\n== ${plan.title}`);
  const runsIn = (v: Variant, s: Subject, d: Durability) =>
    (plan.runs?.(v, s, d) ?? true) && !(plan.durabilityFree?.includes(s) && d !== plan.durabilities[0]);
  // Templates, once per (variant, subject).
  const templates = new Map<string, string>();
  for (const v of plan.variants) {
    for (const s of plan.subjects) {
      const t = plan.template?.(v, s);
      if (!t || !plan.durabilities.some((d) => runsIn(v, s, d))) continue;
      const file = t === "temp" ? path.join(tmp, `template-${plan.id}-${v.id}-${s}`) : t.cached;
      templates.set(`${v.id}|${s}`, file);
      if (t !== "temp" && fs.existsSync(file)) {
        log(`  using cached ${path.relative(ROOT, file)}`);
        continue;
      }
      const t0 = performance.now();
      log(`  preparing ${v.id}/${s}...`);
      await runChild(
        {
          scenario: plan.id,
          subject: s,
          durability: "normal",
          params: paramsOf(plan, v, s, "normal"),
          dir: tmp,
          template: file,
          phase: "prepare",
        },
        { timeoutMs: plan.prepareTimeoutMs ?? 15 * 60_000 },
      );
      log(`  prepared ${v.id}/${s} in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    }
  }
  // Samples, round-robin over subjects so drift hits them alike.
  for (let k = 1; k <= samples; k++) {
    for (const v of plan.variants) {
      for (const d of plan.durabilities) {
        for (const s of plan.subjects) {
          if (!runsIn(v, s, d) || store.error(v.id, d, s)) continue;
          const dir = fs.mkdtempSync(path.join(tmp, `${plan.id}-`));
          const spec: ChildSpec = {
            scenario: plan.id,
            subject: s,
            durability: d,
            params: paramsOf(plan, v, s, d),
            dir,
            ...(templates.has(`${v.id}|${s}`) ? { template: templates.get(`${v.id}|${s}`)! } : {}),
          };
          const t0 = performance.now();
          try {
            const m = await runChild(spec, { flags: plan.flags ?? [], timeoutMs: plan.timeoutMs });
            store.add(v.id, d, s, m);
            log(
              `  #${k} ${v.id} ${d} ${s}: ${summaryLine(m)} (${((performance.now() - t0) / 1000).toFixed(1)} s)`,
            );
          } catch (err) {
            store.fail(v.id, d, s, (err as Error).message);
            log(`  #${k} ${v.id} ${d} ${s}: FAILED ${(err as Error).message}`);
          } finally {
            fs.rmSync(dir, { recursive: true, force: true });
          }
        }
      }
    }
  }
  return store;
}

/** A CPU profile of Waymark in one variant of a plan: top self time. */
async function profileVariant(plan: Plan, variantId: string, tmp: string): Promise<string> {
  const v = plan.variants.find((x) => x.id === variantId) ?? plan.variants[0]!;
  const dir = fs.mkdtempSync(path.join(tmp, `profile-${plan.id}-`));
  const name = `profile-${plan.id}-${v.id}.cpuprofile`;
  const file = path.join(CACHE_DIR, name);
  fs.mkdirSync(CACHE_DIR, { recursive: true });
  fs.rmSync(file, { force: true });
  const t = plan.template?.(v, "waymark");
  const template =
    t === "temp" ? path.join(tmp, `template-${plan.id}-${v.id}-waymark`) : t ? t.cached : undefined;
  await runChild(
    {
      scenario: plan.id,
      subject: "waymark",
      durability: "normal",
      params: paramsOf(plan, v, "waymark", "normal"),
      dir,
      ...(template ? { template } : {}),
      profile: file,
    },
    { flags: plan.flags ?? [], timeoutMs: plan.timeoutMs },
  );
  fs.rmSync(dir, { recursive: true, force: true });
  return [
    `### ${plan.title}: Waymark's CPU profile (${v.label || v.id}, default durability)`,
    "",
    profileTable(summarize(file, 15)),
    "",
    `Whole profile: \`bench/.cache/${name}\` (Chrome DevTools or speedscope).`,
  ].join("\n");
}

const NOTES_FILE = path.join(ROOT, "bench/notes.md");
const NOTES_MARK = "<!-- notes: from bench/notes.md -->";

function notesSection(): string[] {
  const notes = fs.existsSync(NOTES_FILE) ? fs.readFileSync(NOTES_FILE, "utf8").trim() : "";
  return notes ? ["", NOTES_MARK, "", notes] : [];
}

/** Replaces the notes at the end of bench/results.md with bench/notes.md as it is now. */
function refreshNotes(): void {
  const file = path.join(ROOT, "bench/results.md");
  const doc = fs.readFileSync(file, "utf8");
  const at = doc.indexOf(NOTES_MARK);
  const head = (at >= 0 ? doc.slice(0, at) : doc).trimEnd();
  fs.writeFileSync(file, `${[head, ...notesSection()].join("\n")}\n`);
  log(`refreshed the notes of ${path.relative(ROOT, file)}`);
}

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  if (args.notes) {
    refreshNotes();
    return;
  }
  const samples = args.runs ?? (args.quick ? 1 : 3);
  const started = new Date();
  const t0 = performance.now();
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-bench-"));
  const selected = plans({ quick: args.quick }).filter((p) => !args.only || args.only.includes(p.id));
  if (selected.length === 0) throw new Error(`bench: --only matches no scenario (a b c d e f pg p t r g)`);
  const machine = await describeMachine(tmp, selected.some((p) => p.id === "pg") ? PG_DATABASE : null);
  log(machine.map(([k, v]) => `${k}: ${v}`).join("\n"));
  if (selected.some((p) => p.id === "f" || p.id === "g")) build();
  const sections: string[] = [];
  const targets: Target[] = [];
  const raw: Record<string, unknown> = {};
  try {
    for (const plan of selected) {
      const store = await runPlan(plan, tmp, samples);
      raw[plan.id] = store.raw();
      const out = plan.render(store);
      sections.push(out.markdown);
      targets.push(...out.targets);
      process.stdout.write(`\n${out.markdown}\n`);
    }
    const profiles: string[] = [];
    if (args.profile) {
      for (const plan of selected) {
        const missed = new Set(
          targets.filter((t) => t.scenario === plan.id && t.ok === false).map((t) => t.variant),
        );
        for (const variant of missed) {
          log(`\nprofiling Waymark in ${plan.id}/${variant} (a target was missed)...`);
          try {
            profiles.push(await profileVariant(plan, variant, tmp));
          } catch (err) {
            profiles.push(`### ${plan.title} (${variant})\n\nProfile failed: ${(err as Error).message}`);
          }
        }
      }
    }
    const minutes = (performance.now() - t0) / 60_000;
    const command = `npm run bench${process.argv.length > 2 ? ` -- ${process.argv.slice(2).join(" ")}` : ""}`;
    const summary = table(
      ["", "target (default durability)", "measured", "goal", ""],
      targets.map((t) => [t.scenario, t.what, t.measured, t.goal, mark(t.ok)]),
      ["l", "l", "r", "r", "l"],
    );
    process.stdout.write(`\n## Targets\n\n${summary}\n`);
    const doc = [
      "# Waymark benchmarks",
      "",
      `Command: \`${command}\`, run ${started.toISOString().replace("T", " ").slice(0, 16)} UTC, ${minutes.toFixed(1)} minutes. ` +
        `Every figure is the median of ${samples} sample${samples > 1 ? "s" : ""}, each in a fresh \`node\` process (timed inside it, start-up excluded except for cold start). Ratios are from the same run.`,
      "",
      "## Machine",
      "",
      table(
        ["", ""],
        machine.map(([k, v]) => [k, v]),
      ),
      "",
      "## Targets",
      "",
      summary,
      "",
      "## Scenarios",
      "",
      sections.join("\n\n"),
      ...(profiles.length ? ["", "## Profiles where a target is missed", "", profiles.join("\n\n")] : []),
      ...notesSection(),
      "",
    ].join("\n");
    const out =
      args.quick || args.only || args.runs
        ? path.join(CACHE_DIR, "results-partial.md")
        : path.join(ROOT, "bench/results.md");
    fs.mkdirSync(CACHE_DIR, { recursive: true });
    fs.writeFileSync(out, doc);
    fs.writeFileSync(path.join(CACHE_DIR, "results.json"), JSON.stringify(raw, null, 1));
    log(`\nwrote ${path.relative(ROOT, out)} (${minutes.toFixed(1)} minutes)`);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`);
  process.exit(1);
});
