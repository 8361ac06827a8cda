// Crash torture: runs the workload in child processes, kills them with SIGKILL at random moments
// (from outside, inside a step after its side effect, inside a commit), restarts, and at the end checks
// that nothing recorded was lost, nothing ran twice without a crash, and the database is sound.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { internals } from "../../src/engine/engine.js";
import { asEntries } from "../../src/engine/entries.js";
import { applyDiff, type JsonValue } from "../../src/engine/json.js";
import { changesOf } from "../../src/engine/state-history.js";
import { attach } from "../../src/index.js";
import { EXPECTED_STEPS, INBOX_MESSAGES, prng, runsOf } from "./workload.js";

export interface TortureOptions {
  dir: string;
  seed: number;
  /** Incarnations that are killed (the last one then runs to the end). */
  kills: number;
  /** Runs of each workflow created by each incarnation. */
  perWorkflow: number;
  /** Log progress to stderr. */
  verbose?: boolean;
}

export interface TortureReport {
  seed: number;
  kills: { total: number; external: number; inStep: number; inCommit: number };
  incarnations: number;
  runs: number;
  stepsRecorded: number;
  executions: number;
  /** Executions beyond one per recorded step that are not deliberate retries: all caused by a crash. */
  reExecutions: number;
  messages: number;
  violations: string[];
  integrity: string;
  seconds: number;
}

const here = path.dirname(new URL(import.meta.url).pathname);

function spawnTs(script: string, args: string[]): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", path.join(here, script), ...args], {
    stdio: ["ignore", "pipe", "inherit"],
  });
}

function waitForLine(proc: ChildProcess, line: string): Promise<void> {
  return new Promise((resolve) => {
    let buf = "";
    proc.stdout!.on("data", (d: Buffer) => {
      buf += d.toString();
      if (buf.includes(`${line}\n`)) resolve();
    });
  });
}

export async function torture(options: TortureOptions): Promise<TortureReport> {
  const started = Date.now();
  const db = path.join(options.dir, "torture.db");
  const ledger = path.join(options.dir, "ledger.tsv");
  fs.writeFileSync(ledger, "");
  const random = prng(options.seed);
  const kills = { total: 0, external: 0, inStep: 0, inCommit: 0 };
  const log = (m: string) => options.verbose && process.stderr.write(`${m}\n`);

  // The database is created (and migrated) once before the feeder attaches.
  const setupEngine = await attach({ database: db });
  await setupEngine.close();
  const feeder = spawnTs("feeder.ts", [db]);

  let gen = 0;
  for (; kills.total < options.kills; gen++) {
    // Each incarnation dies one of three ways, chosen by the seed.
    const mode = random();
    const inStep = mode < 0.25 ? 0.02 : 0;
    const inCommit = mode >= 0.25 && mode < 0.5 ? 0.05 : 0;
    const child = spawnTs("child.ts", [
      db,
      ledger,
      String(gen),
      String(options.seed),
      String(options.perWorkflow),
      String(inStep),
      String(inCommit),
    ]);
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
      child.on("exit", (code, signal) => r({ code, signal })),
    );
    // Killed from outside at a random moment after it is up (unless it dies on its own first).
    const delay = Math.floor(random() * 150);
    let timer: NodeJS.Timeout | undefined;
    void waitForLine(child, "ready").then(() => {
      timer = setTimeout(() => child.kill("SIGKILL"), delay);
    });
    const { code, signal } = await exit;
    clearTimeout(timer);
    if (signal === "SIGKILL") {
      kills.total++;
      if (inStep) kills.inStep++;
      else if (inCommit) kills.inCommit++;
      else kills.external++;
    } else if (code !== 0) {
      throw new Error(`Incarnation ${gen} exited with code ${code}`);
    }
    log(
      `gen ${gen}: ${signal ?? `exit ${code}`} (${inStep ? "in-step" : inCommit ? "in-commit" : `outside, ${delay} ms after ready`}; kills ${kills.total})`,
    );
  }
  // The last incarnation runs to the end without kills.
  const last = spawnTs("child.ts", [
    db,
    ledger,
    String(gen),
    String(options.seed),
    String(options.perWorkflow),
    "0",
    "0",
  ]);
  const lastExit = new Promise<number | null>((r) => last.on("exit", (code) => r(code)));
  let guard: NodeJS.Timeout | undefined;
  await Promise.race([
    waitForLine(last, "done"),
    new Promise((_, reject) => {
      guard = setTimeout(() => {
        last.kill("SIGKILL");
        feeder.kill("SIGKILL");
        reject(new Error("the final incarnation did not finish in 120 s"));
      }, 120_000);
    }),
  ]);
  clearTimeout(guard);
  await lastExit;
  feeder.kill("SIGKILL");
  const incarnations = gen + 1;

  const report = await check(db, ledger, incarnations, options);
  return { ...report, seed: options.seed, kills, incarnations, seconds: (Date.now() - started) / 1000 };
}

async function check(
  db: string,
  ledgerFile: string,
  incarnations: number,
  options: TortureOptions,
): Promise<Omit<TortureReport, "seed" | "kills" | "incarnations" | "seconds">> {
  const violations: string[] = [];
  const engine = await attach({ database: db });
  try {
    // Every run that any incarnation created (all incarnations before the last were killed at some
    // point, so some of their batches may never have been created: those are simply absent).
    const all = [];
    for (let cursor: string | null | undefined; ; ) {
      const page = await engine.listRuns({ limit: 1000, ...(cursor ? { cursor } : {}) });
      all.push(...page.runs);
      if (!page.nextCursor) break;
      cursor = page.nextCursor;
    }
    const expectedKeys = new Set<string>();
    for (let g = 0; g < incarnations; g++)
      for (const r of runsOf(g, options.perWorkflow)) expectedKeys.add(`${r.workflow}/${r.key}`);
    const lastGen = incarnations - 1;
    for (const r of runsOf(lastGen, options.perWorkflow)) {
      if (!all.some((x) => x.workflow === r.workflow && x.key === r.key))
        violations.push(`run ${r.workflow}/${r.key} of the final incarnation is missing`);
    }

    // Ledger: executions per (run, step path), with incarnation and attempt.
    const executions = new Map<string, Array<{ gen: number; attempt: number }>>();
    let executionCount = 0;
    for (const line of fs.readFileSync(ledgerFile, "utf8").split("\n")) {
      if (!line) continue;
      const [g, key, p, attempt] = line.split("\t");
      const k = `${key}\t${p}`;
      if (!executions.has(k)) executions.set(k, []);
      executions.get(k)!.push({ gen: Number(g), attempt: Number(attempt) });
      executionCount++;
    }

    let stepsRecorded = 0;
    let reExecutions = 0;
    let messages = 0;
    for (const run of all) {
      const label = `${run.workflow}/${run.key}`;
      if (!expectedKeys.has(label)) violations.push(`unexpected run ${label}`);
      if (run.status !== "completed") {
        violations.push(`run ${label} is ${run.status}, not completed`);
        continue;
      }
      const rows = await internals(engine).store.allEntries(run.id);
      const steps = rows.filter((r) => r.kind === "step");
      const paths = steps.map((r) => (r.scope ? `${r.scope}/${r.name}` : r.name));
      const expected = EXPECTED_STEPS[run.workflow]!(run.key);
      // Loops keep only their recent iterations, so compare what history holds against the expected tail.
      const expectedHeld = run.workflow === "inbox" ? expected.slice(-2) : expected;
      if (JSON.stringify([...paths].sort()) !== JSON.stringify([...expectedHeld].sort())) {
        violations.push(
          `run ${label} records steps [${paths.join(", ")}], expected [${expectedHeld.join(", ")}]`,
        );
      }
      for (const s of steps)
        if (s.status !== "completed") violations.push(`step ${label}:${s.name} is ${s.status}`);
      stepsRecorded += expected.length;

      for (const p of expected) {
        const runs = executions.get(`${run.key}\t${p}`) ?? [];
        if (runs.length === 0) {
          violations.push(`step ${label}:${p} is recorded but its side effect never ran`);
          continue;
        }
        // Within one process, an attempt number never repeats: a repeat would be a re-run without a crash.
        const seen = new Set<string>();
        for (const e of runs) {
          const id = `${e.gen}:${e.attempt}`;
          if (seen.has(id))
            violations.push(`step ${label}:${p} attempt ${e.attempt} ran twice in incarnation ${e.gen}`);
          seen.add(id);
        }
        // A re-execution across incarnations is legitimate only if that incarnation was killed (all but the last).
        const gens = [...new Set(runs.map((e) => e.gen))].sort((a, b) => a - b);
        for (const g of gens.slice(0, -1))
          if (g === incarnations - 1)
            violations.push(`step ${label}:${p} re-ran after the final incarnation`);
        // The fewest side effects a step needs: one, or two for the chain's steps that fail their first attempt.
        const minimum = run.workflow === "chain" && Number(p.slice(1)) % 5 === 4 ? 2 : 1;
        reExecutions += Math.max(0, runs.length - minimum);
      }

      // State equals what the recorded steps wrote: the initial state plus every recorded change, in order.
      const initial = JSON.parse((await internals(engine).store.getRun(run.id))!.initialState) as Record<
        string,
        JsonValue
      >;
      for (const c of changesOf(asEntries(rows))) applyDiff(initial, c.diff);
      if (JSON.stringify(initial) !== JSON.stringify(run.state)) {
        violations.push(
          `run ${label}: state ${JSON.stringify(run.state)} differs from its recorded changes ${JSON.stringify(initial)}`,
        );
      }
      if (run.workflow === "inbox") {
        const state = run.state as { got: number[]; sum: number };
        const want = Array.from({ length: INBOX_MESSAGES }, (_, i) => i + 1);
        if (JSON.stringify(state.got) !== JSON.stringify(want))
          violations.push(
            `run ${label} got messages ${JSON.stringify(state.got)}, expected ${JSON.stringify(want)}`,
          );
        const msgs = await internals(engine).store.listMessages(run.id, {
          includeConsumed: true,
          limit: 100,
        });
        messages += msgs.length;
        if (msgs.length !== INBOX_MESSAGES)
          violations.push(`run ${label} has ${msgs.length} messages stored, expected ${INBOX_MESSAGES}`);
        for (const m of msgs)
          if (m.consumedAt === null) violations.push(`message #${m.id} of ${label} was never consumed`);
        const consumers = msgs.map((m) => m.consumedBy);
        if (new Set(consumers).size !== consumers.length)
          violations.push(`run ${label}: one entry consumed two messages`);
      }
    }
    const conn = new Database(db, { readonly: true });
    const integrity = conn.pragma("integrity_check", { simple: true }) as string;
    conn.close();
    if (integrity !== "ok") violations.push(`integrity_check: ${integrity}`);
    return {
      runs: all.length,
      stepsRecorded,
      executions: executionCount,
      reExecutions,
      messages,
      violations,
      integrity,
    };
  } finally {
    await engine.close();
  }
}

/** `npm run torture`: the long run, printing its figures. */
export async function main(argv: string[]): Promise<number> {
  const arg = (name: string, fallback: number) => {
    const i = argv.indexOf(`--${name}`);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  const dir = fs.mkdtempSync(path.join((await import("node:os")).tmpdir(), "waymark-torture-"));
  const report = await torture({
    dir,
    seed: arg("seed", Date.now() % 100_000),
    kills: arg("kills", 200),
    perWorkflow: arg("per-workflow", 3),
    verbose: argv.includes("--verbose"),
  });
  process.stdout.write(`${formatReport(report)}\n`);
  if (report.violations.length === 0) fs.rmSync(dir, { recursive: true, force: true });
  else process.stdout.write(`database and ledger kept in ${dir}\n`);
  return report.violations.length === 0 ? 0 : 1;
}

export function formatReport(r: TortureReport): string {
  return [
    `torture seed ${r.seed}: ${r.kills.total} kills (${r.kills.external} from outside, ${r.kills.inStep} inside a step after its side effect, ${r.kills.inCommit} inside a commit) over ${r.incarnations} incarnations in ${r.seconds.toFixed(1)} s`,
    `runs ${r.runs}, steps recorded ${r.stepsRecorded}, side effects ${r.executions}, re-executions after a crash ${r.reExecutions}, messages ${r.messages}`,
    `integrity_check ${r.integrity}; violations ${r.violations.length}`,
    ...r.violations.slice(0, 20).map((v) => `  - ${v}`),
  ].join("\n");
}
