// Reads a V8 .cpuprofile (node --cpu-prof) and sums self time by function: where a scenario spends its CPU.

import fs from "node:fs";
import path from "node:path";
import { ROOT } from "./common.js";

interface CpuProfile {
  startTime: number;
  endTime: number;
  nodes: Array<{
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }>;
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileLine {
  fn: string;
  where: string;
  selfMs: number;
  share: number;
}

/** Where a function lives, short: src/engine/step.ts:120, node:internal/..., or a package name. */
function shortUrl(url: string, line: number): string {
  if (!url) return "";
  let p = url.replace(/^file:\/\//, "");
  if (p.startsWith(ROOT)) p = path.relative(ROOT, p);
  const nm = p.lastIndexOf("node_modules/");
  if (nm >= 0) p = p.slice(nm + "node_modules/".length);
  return `${p}:${line + 1}`;
}

/** Self time per function, largest first, with its share of all sampled time (idle excluded). */
export interface ProfileSummary {
  wallMs: number;
  idleMs: number;
  totalMs: number;
  lines: ProfileLine[];
}

export function summarize(file: string, top = 15): ProfileSummary {
  const prof = JSON.parse(fs.readFileSync(file, "utf8")) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  // The profiler's own work when it stops (serialising the profile) is not the scenario's.
  const skip = new Set<number>();
  const mark = (id: number) => {
    skip.add(id);
    for (const c of byId.get(id)?.children ?? []) mark(c);
  };
  for (const n of prof.nodes) if (n.callFrame.url === "node:inspector") mark(n.id);
  const self = new Map<string, { fn: string; where: string; us: number }>();
  let total = 0;
  let idle = 0;
  prof.samples.forEach((id, i) => {
    const node = byId.get(id);
    const dt = prof.timeDeltas[i] ?? 0;
    if (!node || skip.has(id)) return;
    const name = node.callFrame.functionName || "(anonymous)";
    if (name === "(idle)") idle += dt;
    if (name === "(idle)" || name === "(program)") return;
    const where = shortUrl(node.callFrame.url, node.callFrame.lineNumber);
    const key = `${name}@${where}`;
    const entry = self.get(key) ?? { fn: name, where, us: 0 };
    entry.us += dt;
    self.set(key, entry);
    total += dt;
  });
  const lines = [...self.values()]
    .sort((a, b) => b.us - a.us)
    .slice(0, top)
    .map((e) => ({ fn: e.fn, where: e.where, selfMs: e.us / 1000, share: e.us / total }));
  return {
    wallMs: (prof.endTime - prof.startTime) / 1000,
    idleMs: idle / 1000,
    totalMs: total / 1000,
    lines,
  };
}

/** The largest profile in a directory (a child writes one per thread; the main thread's is the big one). */
export function mainProfile(dir: string): string | null {
  if (!fs.existsSync(dir)) return null;
  const files = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".cpuprofile"))
    .map((f) => path.join(dir, f));
  if (files.length === 0) return null;
  return files.sort((a, b) => fs.statSync(b).size - fs.statSync(a).size)[0]!;
}

export function profileTable(summary: ProfileSummary): string {
  const rows = summary.lines.map(
    (l) => `| ${(l.share * 100).toFixed(1)}% | ${l.selfMs.toFixed(1)} | \`${l.fn}\` | ${l.where} |`,
  );
  return [
    `Profiled ${summary.wallMs.toFixed(0)} ms of wall time: ${summary.totalMs.toFixed(0)} ms busy (JavaScript and native calls), ${summary.idleMs.toFixed(0)} ms idle (waiting for I/O or timers). Top self time (native calls, such as better-sqlite3's \`run\`, show without a file):`,
    "",
    "| share | self ms | function | where |",
    "|---:|---:|---|---|",
    ...rows,
  ].join("\n");
}
