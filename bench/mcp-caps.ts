// The MCP server's memory and CPU under the attacks of issue 13 point 3, measured on a real
// `waymark mcp --http` process of a tree (this one by default, or an earlier commit's worktree):
//
//   node --import tsx bench/mcp-caps.ts                       this tree
//   node --import tsx bench/mcp-caps.ts --tree /tmp/before    another checkout (its own src/, same node_modules)
//   node --import tsx bench/mcp-caps.ts --quick               smaller counts, for a try
//   node --import tsx bench/mcp-caps.ts --only cpu            some of sessions, bigUris, cpu
//
// Figures, each from the server process's /proc (RSS in MB; CPU in % of one core over a window):
//   sessions   3,000 HTTP initializes: RSS before, right after, and 10 s later (held); answers by status
//   big URIs   one session subscribing 2,000 times to 100 KB URIs that name nothing: RSS before and after
//   CPU        another process commits a step every ~10 ms; server CPU over 10 s with no subscription,
//              then with 5,000 subscriptions (one per waiting run, 5 sessions of 1,000)

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const argv = process.argv.slice(2);
const flag = (name: string) => argv.includes(name);
const option = (name: string, fallback: string) => {
  const i = argv.indexOf(name);
  return i >= 0 && argv[i + 1] ? argv[i + 1]! : fallback;
};
const TREE = path.resolve(option("--tree", ROOT));
const QUICK = flag("--quick");
const N = {
  initializes: QUICK ? 300 : 3000,
  bigSubscriptions: QUICK ? 200 : 2000,
  subscriptions: Number(option("--subscriptions", QUICK ? "500" : "5000")),
  cpuWindowMs: QUICK ? 3000 : 10_000,
  heldMs: QUICK ? 2000 : 10_000,
};
const TICK_MS = 1000 / 100; // USER_HZ on Linux

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const mb = (bytes: number) => Math.round(bytes / 1e5) / 10;

function rss(pid: number): number {
  const line = fs.readFileSync(`/proc/${pid}/status`, "utf8").match(/VmRSS:\s+(\d+) kB/);
  return Number(line?.[1] ?? 0) * 1024;
}

/** CPU time of a process so far, in ms (user + system). */
function cpuMs(pid: number): number {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
}

async function cpuPercent(pid: number, windowMs: number): Promise<number> {
  const c0 = cpuMs(pid);
  const t0 = performance.now();
  await sleep(windowMs);
  return Math.round(((cpuMs(pid) - c0) / (performance.now() - t0)) * 1000) / 10;
}

const children: ChildProcess[] = [];
process.on("exit", () => {
  for (const c of children) c.kill("SIGKILL");
});

/** The tree's `waymark mcp --http` on a free port, attached to `db`. */
async function server(db: string, extra: string[] = []): Promise<{ pid: number; url: string; stop(): void }> {
  const proc = spawn(
    process.execPath,
    ["--import", "tsx", path.join(TREE, "src/cli/main.ts"), "mcp", "--http", "0", "--db", db, ...extra],
    { cwd: TREE, stdio: ["ignore", "ignore", "pipe"] },
  );
  children.push(proc);
  let err = "";
  const url = await new Promise<string>((resolve, reject) => {
    proc.stderr!.on("data", (d) => {
      err += d;
      const m = err.match(/listening on (http:\/\/\S+)/);
      if (m) resolve(m[1]!);
    });
    proc.once("exit", (code) => reject(new Error(`the server exited (${code}): ${err}`)));
  });
  await sleep(300);
  return { pid: proc.pid!, url, stop: () => proc.kill("SIGKILL") };
}

/** The writer process (the tree's engine): `waiting` runs, then a step every ~10 ms. */
async function writer(db: string, waiting: number): Promise<() => void> {
  const proc = spawn(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "bench/mcp-caps-writer.ts"), TREE, db, String(waiting)],
    { cwd: ROOT, stdio: ["ignore", "pipe", "inherit"] },
  );
  children.push(proc);
  await new Promise<void>((resolve, reject) => {
    let out = "";
    proc.stdout!.on("data", (d) => {
      out += d;
      if (out.includes("ready")) resolve();
    });
    proc.once("exit", (code) => reject(new Error(`the writer exited (${code})`)));
  });
  return () => proc.kill("SIGKILL");
}

const INIT = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "1" } },
});

async function sessions(db: string) {
  const s = await server(db);
  const before = rss(s.pid);
  const statuses: Record<string, number> = {};
  for (let i = 0; i < N.initializes; i += 20) {
    await Promise.all(
      Array.from({ length: Math.min(20, N.initializes - i) }, async () => {
        const res = await fetch(s.url, {
          method: "POST",
          headers: { "content-type": "application/json", accept: "application/json, text/event-stream" },
          body: INIT,
        });
        await res.arrayBuffer();
        statuses[res.status] = (statuses[res.status] ?? 0) + 1;
      }),
    );
  }
  const after = rss(s.pid);
  await sleep(N.heldMs);
  const held = rss(s.pid);
  s.stop();
  return { before: mb(before), after: mb(after), held: mb(held), statuses };
}

async function connect(url: string): Promise<Client> {
  const client = new Client({ name: "bench", version: "1" });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  return client;
}

async function bigUris(db: string) {
  const s = await server(db);
  const client = await connect(s.url);
  const before = rss(s.pid);
  let refused = 0;
  let firstError = "";
  for (let i = 0; i < N.bigSubscriptions; i++) {
    const uri = `waymark://runs/idle/${i}-${"x".repeat(100_000)}`;
    await client.subscribeResource({ uri }).catch((err: Error) => {
      refused++;
      firstError ||= err.message.slice(0, 120);
    });
  }
  const after = rss(s.pid);
  await client.close().catch(() => {});
  s.stop();
  return { before: mb(before), after: mb(after), refused, firstError };
}

async function cpu(db: string) {
  const s = await server(db);
  const idleCpu = await cpuPercent(s.pid, N.cpuWindowMs);
  const clients: Client[] = [];
  let refused = 0;
  for (let i = 0; i < N.subscriptions; i += 1000) {
    const client = await connect(s.url);
    clients.push(client);
    for (let j = i; j < Math.min(i + 1000, N.subscriptions); j++) {
      await client.subscribeResource({ uri: `waymark://runs/idle/w-${j}` }).catch(() => void refused++);
    }
  }
  const rssHeld = rss(s.pid);
  const withSubs = await cpuPercent(s.pid, N.cpuWindowMs);
  for (const c of clients) await c.close().catch(() => {});
  s.stop();
  return {
    cpuNoSubscriptions: idleCpu,
    cpuWithSubscriptions: withSubs,
    refused,
    rssWithSubscriptions: mb(rssHeld),
  };
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-mcp-caps-"));
const db = path.join(dir, "bench.db");
process.stderr.write(`tree ${TREE}\n`);
const stopWriter = await writer(db, N.subscriptions);
const only = option("--only", "sessions,bigUris,cpu").split(",");
const results = {
  tree: TREE,
  counts: N,
  ...(only.includes("sessions") ? { sessions: await sessions(db) } : {}),
  ...(only.includes("bigUris") ? { bigUris: await bigUris(db) } : {}),
  ...(only.includes("cpu") ? { cpu: await cpu(db) } : {}),
};
stopWriter();
process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
fs.rmSync(dir, { recursive: true, force: true });
process.exit(0);
