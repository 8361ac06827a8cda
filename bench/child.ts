// One measurement in a fresh process: `node --import tsx bench/child.ts '<ChildSpec as JSON>'`.
// Prints one line `BENCH_RESULT {...figures}` on stdout and exits; start-up is not measured.

import fs from "node:fs";
import { Session } from "node:inspector/promises";
import { findSourceMap } from "node:module";
import { type ChildSpec, type Metrics, profiler, RESULT_TAG, type ScenarioModule } from "./lib/common.js";

const SCENARIOS: Record<string, () => Promise<{ scenario: ScenarioModule }>> = {
  a: () => import("./scenarios/a-sequential.js"),
  b: () => import("./scenarios/b-concurrent.js"),
  c: () => import("./scenarios/c-resume.js"),
  d: () => import("./scenarios/d-growth.js"),
  e: () => import("./scenarios/e-waiting.js"),
  f: () => import("./scenarios/f-mcp.js"),
  pg: () => import("./scenarios/pg.js"),
  p: () => import("./scenarios/p-prune.js"),
  t: () => import("./scenarios/t-tags.js"),
  r: () => import("./scenarios/r-restart.js"),
  g: () => import("./scenarios/g-million.js"),
};

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2] ?? "") as ChildSpec;
  const load = SCENARIOS[spec.scenario];
  if (!load) throw new Error(`unknown scenario ${spec.scenario}`);
  const { scenario } = await load();
  if (spec.phase === "prepare") {
    const prepare = scenario.prepare?.[spec.subject];
    if (!prepare) throw new Error(`scenario ${spec.scenario} has no prepare for ${spec.subject}`);
    await prepare(spec);
    process.stdout.write(`${RESULT_TAG}{}\n`);
  } else {
    const measure = scenario.measure[spec.subject];
    if (!measure) throw new Error(`scenario ${spec.scenario} does not measure ${spec.subject}`);
    const metrics = spec.profile ? await profiled(spec.profile, () => measure(spec)) : await measure(spec);
    process.stdout.write(`${RESULT_TAG}${JSON.stringify(metrics)}\n`);
  }
}

/**
 * Samples the CPU (every 200 µs) while `fn` runs, or between its profiler.start() and stop(), and writes a
 * .cpuprofile whose positions are mapped back to the TypeScript sources (tsx compiles them to one line).
 */
async function profiled(file: string, fn: () => Promise<Metrics>): Promise<Metrics> {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.setSamplingInterval", { interval: 200 });
  let running = false;
  let saved = false;
  profiler.start = async () => {
    if (running) await session.post("Profiler.stop");
    await session.post("Profiler.start");
    running = true;
  };
  profiler.stop = async () => {
    if (!running) return;
    running = false;
    const { profile } = await session.post("Profiler.stop");
    fs.writeFileSync(file, JSON.stringify(toSources(profile)));
    saved = true;
  };
  await profiler.start();
  const metrics = await fn();
  if (!saved && !profiler.external) await profiler.stop();
  session.disconnect();
  return metrics;
}

/** Rewrites each frame's url and position to its original source through the module's source map. */
function toSources(profile: {
  nodes: Array<{ callFrame: { url: string; lineNumber: number; columnNumber: number } }>;
}) {
  const maps = new Map<string, ReturnType<typeof findSourceMap>>();
  for (const { callFrame: f } of profile.nodes) {
    if (!f.url.startsWith("file://") || f.url.includes("/node_modules/")) continue;
    if (!maps.has(f.url)) maps.set(f.url, findSourceMap(f.url));
    const entry = maps.get(f.url)?.findEntry(f.lineNumber, f.columnNumber) as
      | { originalSource?: string; originalLine?: number; originalColumn?: number }
      | undefined;
    if (entry?.originalSource === undefined) continue;
    f.url = entry.originalSource;
    f.lineNumber = entry.originalLine!;
    f.columnNumber = entry.originalColumn!;
  }
  return profile;
}

main().then(
  () => process.exit(0),
  (err: unknown) => {
    process.stderr.write(
      `bench child failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
    process.exit(1);
  },
);
