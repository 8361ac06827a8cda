// (g) A database with a million runs (bench/lib/million-db.ts), read over a real stdio MCP client spawning the
// built CLI: list_runs (first page; by workflow, status, error text, time window), list_failures (complete),
// get_run, a get_history page, diagnose_run on a failed run; p50 and p95 of CALLS calls each. Cold start:
// spawn to the first answer. Bytes per entry: the file's size over its entries. Then the inspector as a user
// opens it: the built CLI serves `mcp --http` on the file, and headless Chromium times first paint of the runs
// list and of a failed run's page (a deep link), each in a fresh context, p50 and p95 of PAINTS; the API calls
// the page made before it painted are kept (median ms from navigation to each answer), to say what a slow
// paint waited on. Reads only: the cached file is opened as it is (no copy of 2 GB per sample), and durability
// does not apply.

import { spawn } from "node:child_process";
import fs from "node:fs";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import Database from "better-sqlite3";
import { launchBrowser } from "../../test/browser.js";
import { type Metrics, median, num, percentile, ROOT, type ScenarioModule } from "../lib/common.js";
import {
  buildMillionDatabase,
  kindOf,
  MILLION_GAP_MS,
  MILLION_T0,
  millionAddress,
} from "../lib/million-db.js";
import { type ApiCall, firstPaint } from "../lib/page-marks.js";
import { serverCommand } from "./f-mcp.js";

const CALLS = 25;
/** First paints timed per page, after one warm-up. */
const PAINTS = 5;

type Call = (
  name: string,
  args: Record<string, unknown>,
) => Promise<CallToolResult & { structuredContent?: any }>;

async function connect(db: string): Promise<{ call: Call; close: () => Promise<void> }> {
  const transport = new StdioClientTransport({ ...serverCommand(db, "built"), cwd: ROOT, stderr: "pipe" });
  const client = new Client({ name: "waymark-bench", version: "1.0.0" });
  await client.connect(transport);
  const call: Call = async (name, args) => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult & {
      structuredContent?: any;
    };
    if (r.isError) throw new Error(`${name} ${JSON.stringify(args)} failed: ${JSON.stringify(r.content)}`);
    return r;
  };
  return { call, close: () => client.close() };
}

/** The i-th run of `kind`, spread over the file (deterministic). */
function runOf(kind: (k: string) => boolean, n: number, runs: number): { workflow: string; key: string } {
  for (let i = (n * 7919 * 10) % runs; ; i = (i + 1) % runs) if (kind(kindOf(i))) return millionAddress(i);
}

async function time(
  m: Metrics,
  name: string,
  fn: (i: number) => Promise<unknown>,
  check?: (r: any) => void,
): Promise<void> {
  check?.(await fn(0)); // warm the statement once, as a server that answered before would be
  const out: number[] = [];
  for (let i = 0; i < CALLS; i++) {
    const t = performance.now();
    const r = await fn(i + 1);
    out.push(performance.now() - t);
    check?.(r);
  }
  m[`${name}P50`] = median(out);
  m[`${name}P95`] = percentile(out, 95);
}

async function measure(file: string, runs: number): Promise<Metrics> {
  const m: Metrics = {};
  const t0 = performance.now();
  const c = await connect(file);
  await c.call("get_run", millionAddress(1));
  m.coldMs = performance.now() - t0;
  const { call } = c;
  const some = (r: any) => {
    if (!r.structuredContent?.runs?.length) throw new Error("an empty page");
  };
  await time(m, "listFirst", () => call("list_runs", {}), some);
  await time(m, "listWorkflow", (i) => call("list_runs", { workflow: `wf-${i % 10}` }), some);
  await time(m, "listStatus", (i) => call("list_runs", { status: ["failed", "waiting"][i % 2] }), some);
  await time(m, "listError", () => call("list_runs", { errorContains: "stock missing" }), some);
  // A string no run's error holds: answered from the trigram index of error text (migration 15); without it
  // every run with an error was read (160 ms).
  await time(m, "listErrorRare", () => call("list_runs", { errorContains: "no run has this" }));
  // 1 and 2 characters, which have no trigram: the index's terms that begin them (migration 17); before it, a
  // string no run's error holds read every run with an error (120 ms). "x" is in a fifth of the errors.
  await time(m, "listErrorShortRare", () => call("list_runs", { errorContains: "zq" }));
  await time(m, "listErrorShort", () => call("list_runs", { errorContains: "x" }), some);
  // An hour's window somewhere in the 23 days the runs span.
  const window = (i: number) => {
    const from = MILLION_T0 + ((i * 104729) % runs) * MILLION_GAP_MS;
    return {
      createdAfter: new Date(from).toISOString(),
      createdBefore: new Date(from + 3_600_000).toISOString(),
    };
  };
  await time(m, "listTime", (i) => call("list_runs", window(i)), some);
  await time(
    m,
    "failures",
    // Since the first run: the default window (the last 7 days of the real clock) holds none of these runs.
    () => call("list_failures", { since: new Date(MILLION_T0).toISOString() }),
    (r) => {
      if (r.structuredContent?.complete !== true) throw new Error("list_failures is not complete");
      if (!r.structuredContent?.failures?.length) throw new Error("list_failures found no failure");
    },
  );
  await time(m, "getRun", (i) =>
    call(
      "get_run",
      runOf(() => true, i, runs),
    ),
  );
  await time(m, "history", (i) =>
    call(
      "get_history",
      runOf(() => true, i, runs),
    ),
  );
  await time(m, "diagnose", (i) =>
    call(
      "diagnose_run",
      runOf((k) => k.startsWith("fail"), i, runs),
    ),
  );
  await c.close();
  const colds: number[] = [m.coldMs];
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const d = await connect(file);
    await d.call("get_run", millionAddress(i * 1000 + 3));
    colds.push(performance.now() - t);
    await d.close();
  }
  m.coldMs = median(colds);
  const db = new Database(file, { readonly: true });
  const entries = db.prepare("SELECT count(*) FROM entries").pluck().get() as number;
  db.close();
  m.entries = entries;
  m.bytesPerEntry = fs.statSync(file).size / entries;
  Object.assign(m, await paints(file, runs));
  return m;
}

/** The built CLI's `waymark mcp --http 127.0.0.1:0` on `db`, and the inspector's address it prints. */
async function serveInspector(db: string): Promise<{ url: string; stop: () => Promise<void> }> {
  const proc = spawn(process.execPath, ["dist/src/cli/main.js", "mcp", "--http", "127.0.0.1:0", "--db", db], {
    cwd: ROOT,
    stdio: ["ignore", "ignore", "pipe"],
  });
  const exited = new Promise<void>((resolve) => proc.once("exit", () => resolve()));
  let err = "";
  const url = await new Promise<string>((resolve, reject) => {
    proc.stderr!.on("data", (d) => {
      err += d;
      const found = err.match(/run inspector at (http:\/\/\S+)/);
      if (found) resolve(found[1]!);
    });
    proc.once("exit", (code) => reject(new Error(`waymark mcp --http exited (${code}): ${err}`)));
  });
  return {
    url,
    stop: async () => {
      proc.kill("SIGTERM");
      await exited;
    },
  };
}

/** An API path with the run's address left out: /runs/{run}/history. */
function callName(path: string): string {
  return path.replace(/^\/runs\/[^/]+\/[^/]+/, "/runs/{run}");
}

/** p50/p95 of the paints under `name`, and per API call the median ms from navigation to its answer. */
function paintFigures(name: string, samples: Array<{ paint: number; calls: ApiCall[] }>): Metrics {
  const m: Metrics = {};
  m[`${name}P50`] = median(samples.map((s) => s.paint));
  m[`${name}P95`] = percentile(
    samples.map((s) => s.paint),
    95,
  );
  const ends = new Map<string, number[]>();
  for (const s of samples)
    for (const c of s.calls) {
      const key = callName(c.path);
      ends.set(key, [...(ends.get(key) ?? []), c.end]);
    }
  for (const [key, at] of ends) if (at.length === samples.length) m[`${name}Api:${key}`] = median(at);
  return m;
}

/** First paint of the runs list and of a failed run's page, in fresh Chromium contexts. */
async function paints(file: string, runs: number): Promise<Metrics> {
  const server = await serveInspector(file);
  const browser = await launchBrowser();
  try {
    const list = () => firstPaint(browser, server.url, ".runs-table .run-link");
    const run = (i: number) => {
      const { workflow, key } = runOf((k) => k.startsWith("fail"), i + 100, runs);
      return firstPaint(
        browser,
        `${server.url}#/run/${encodeURIComponent(workflow)}/${encodeURIComponent(key)}`,
        ".tl-main",
      );
    };
    // One warm-up each (the browser's first start, the server's first statements), as in bench/inspector.ts.
    await list();
    await run(0);
    const lists: Array<{ paint: number; calls: ApiCall[] }> = [];
    const pages: Array<{ paint: number; calls: ApiCall[] }> = [];
    for (let i = 0; i < PAINTS; i++) {
      lists.push(await list());
      pages.push(await run(i + 1));
    }
    return { ...paintFigures("paintRuns", lists), ...paintFigures("paintRun", pages) };
  } finally {
    await browser.close();
    await server.stop();
  }
}

export const scenario: ScenarioModule = {
  prepare: {
    async waymark(spec) {
      await buildMillionDatabase(spec.template!, num(spec.params, "runs"), (line) =>
        process.stderr.write(`  ${line}\n`),
      );
    },
  },
  measure: {
    waymark: (spec) => measure(spec.template!, num(spec.params, "runs")),
  },
};
