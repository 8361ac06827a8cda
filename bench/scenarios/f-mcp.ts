// (f) MCP reads on a large database: get_run, list_runs (first page, a filtered page and the filtered page
// after it), get_history (a run's first page, and a page 1,500 entries deep into a 2,000-entry run).
// Variants: "in-process" (an SDK client on an in-memory transport to createMcpServer), "stdio" (an SDK
// client spawning `waymark mcp --stdio --db file`, the built CLI), and "cold" (spawn to first answer).
// Reads only: durability does not apply.

import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { attach } from "../../src/registry.js";
import {
  type ChildSpec,
  copyDatabase,
  type Metrics,
  median,
  num,
  percentile,
  profiler,
  ROOT,
  type ScenarioModule,
} from "../lib/common.js";
import { buildMcpDatabase, LONG_RUN_STEPS, runAddress } from "../lib/mcp-db.js";
import { mainProfile } from "../lib/profile.js";

type Call = (
  name: string,
  args: Record<string, unknown>,
) => Promise<CallToolResult & { structuredContent?: any }>;

/** How the stdio server is started: the built CLI (what Claude Desktop runs) or through tsx (mcp.json). */
export function serverCommand(
  db: string,
  launcher: string,
  flags: string[] = [],
): { command: string; args: string[] } {
  const tail = ["mcp", "--stdio", "--db", db];
  return launcher === "tsx"
    ? { command: process.execPath, args: [...flags, "--import", "tsx", "src/cli/main.ts", ...tail] }
    : { command: process.execPath, args: [...flags, "dist/src/cli/main.js", ...tail] };
}

async function stdioClient(
  db: string,
  launcher: string,
  flags: string[] = [],
): Promise<{ call: Call; close: () => Promise<void> }> {
  const command = serverCommand(db, launcher, flags);
  const transport = new StdioClientTransport({ ...command, cwd: ROOT, stderr: "pipe" });
  const client = new Client({ name: "waymark-bench", version: "1.0.0" });
  await client.connect(transport);
  return { call: caller(client), close: () => client.close() };
}

function caller(client: Client): Call {
  return async (name, args) => {
    const r = (await client.callTool({ name, arguments: args })) as CallToolResult & {
      structuredContent?: any;
    };
    if (r.isError) throw new Error(`${name} ${JSON.stringify(args)} failed: ${JSON.stringify(r.content)}`);
    return r;
  };
}

/** A deterministic pseudo-random run index (same calls in every sample). */
function picker(runs: number) {
  let x = 12345;
  return () => {
    x = (x * 1103515245 + 12345) % 2 ** 31;
    return x % runs;
  };
}

async function timeCalls(count: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    await fn(i);
    out.push(performance.now() - t);
  }
  return out;
}

/** The same calls over any transport; figures in ms. */
async function readLoad(call: Call, runs: number, quick: boolean): Promise<Metrics> {
  const next = picker(runs);
  const getRun = () => call("get_run", runAddress(next()));
  for (let i = 0; i < 20; i++) await getRun(); // warm up
  const m: Metrics = {};
  const getRuns = await timeCalls(quick ? 50 : 300, getRun);
  m.getRunP50 = median(getRuns);
  m.getRunP95 = percentile(getRuns, 95);
  const reps = quick ? 10 : 30;
  m.listFirstP50 = median(await timeCalls(reps, () => call("list_runs", {})));
  const filter = { workflow: "order", status: "failed" };
  const first = await call("list_runs", filter);
  if (!first.structuredContent?.runs?.length) throw new Error("no failed orders in the database");
  m.listFilteredP50 = median(await timeCalls(reps, () => call("list_runs", filter)));
  const cursor = first.structuredContent.nextCursor as string | null;
  if (cursor)
    m.listFilteredNextP50 = median(await timeCalls(reps, () => call("list_runs", { ...filter, cursor })));
  m.historyFirstP50 = median(await timeCalls(reps * 2, () => call("get_history", runAddress(next()))));
  // A cursor 1,500 entries into the long run, reached by paging.
  const long = { workflow: "ledger", key: "long" };
  let deep: string | null = null;
  for (let seen = 0; seen < LONG_RUN_STEPS * 0.75; seen += 100) {
    const page = await call("get_history", { ...long, limit: 100, ...(deep ? { cursor: deep } : {}) });
    deep = page.structuredContent?.nextCursor ?? null;
    if (!deep) throw new Error("the long run's history ended early");
  }
  m.historyDeepP50 = median(await timeCalls(reps, () => call("get_history", { ...long, cursor: deep })));
  return m;
}

/** Spawn to first answer: start the server, initialize, answer one get_run. */
async function coldStart(db: string, launcher: string, flags: string[] = []): Promise<number> {
  const t0 = performance.now();
  const c = await stdioClient(db, launcher, flags);
  await c.call("get_run", runAddress(1));
  const ms = performance.now() - t0;
  await c.close();
  return ms;
}

function database(spec: ChildSpec): string {
  const copy = path.join(spec.dir, "f.db");
  copyDatabase(spec.template!, copy);
  return copy;
}

export const scenario: ScenarioModule = {
  prepare: {
    async waymark(spec) {
      await buildMcpDatabase(spec.template!, num(spec.params, "runs"), (line) =>
        process.stderr.write(`  ${line}\n`),
      );
    },
  },
  measure: {
    async waymark(spec) {
      const runs = num(spec.params, "runs");
      const quick = spec.params.quick === 1;
      const db = database(spec);
      const variant = spec.params.variant;
      if (variant === "in-process") {
        const engine = await attach({ database: db });
        const server = createMcpServer(engine);
        const [a, b] = InMemoryTransport.createLinkedPair();
        await server.connect(a);
        const client = new Client({ name: "waymark-bench", version: "1.0.0" });
        await client.connect(b);
        await profiler.start();
        const m = await readLoad(caller(client), runs, quick);
        await profiler.stop();
        await client.close();
        await engine.close();
        return m;
      }
      // Profiling a stdio variant: the server process's own profile (node --cpu-prof, written as it exits).
      const profileDir = spec.profile ? path.join(spec.dir, "server-profile") : null;
      const flags = profileDir
        ? ["--cpu-prof", "--cpu-prof-interval", "200", "--cpu-prof-dir", profileDir]
        : [];
      const keepProfile = async () => {
        if (!profileDir || !spec.profile) return;
        profiler.external = true;
        for (let i = 0; i < 50 && !mainProfile(profileDir); i++) await new Promise((r) => setTimeout(r, 100));
        const file = mainProfile(profileDir);
        if (file) fs.copyFileSync(file, spec.profile);
      };
      if (variant === "stdio") {
        const c = await stdioClient(db, "built", flags);
        const m = await readLoad(c.call, runs, quick);
        await c.close();
        await keepProfile();
        return m;
      }
      if (profileDir) {
        const coldBuiltMs = await coldStart(db, "built", flags);
        await keepProfile();
        return { coldBuiltMs };
      }
      // cold start: a few spawns per sample, built and through tsx
      const tries = quick ? 2 : 4;
      const built: number[] = [];
      const tsx: number[] = [];
      for (let i = 0; i < tries; i++) {
        built.push(await coldStart(db, "built"));
        tsx.push(await coldStart(db, "tsx"));
      }
      return { coldBuiltMs: median(built), coldTsxMs: median(tsx) };
    },
  },
};
