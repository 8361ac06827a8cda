// What the orchestrator (bench/main.ts) and the measuring children (bench/child.ts) share.

import fs from "node:fs";
import path from "node:path";

export const ROOT = path.resolve(import.meta.dirname, "../..");
export const CACHE_DIR = path.join(ROOT, "bench/.cache");

export type Durability = "normal" | "full";

/** Who is measured: Waymark, the peer on its two drivers, the bare-SQLite floor, DBOS (PostgreSQL rows). */
export type Subject = "waymark" | "rivet-mem" | "rivet-sqlite" | "floor" | "floor-grouped" | "dbos";

export const SUBJECT_LABEL: Record<Subject, string> = {
  waymark: "Waymark",
  "rivet-mem": "Rivet (in-memory driver)",
  "rivet-sqlite": "Rivet (SQLite driver)",
  floor: "SQLite floor (no engine)",
  "floor-grouped": "Waymark's writes alone (no engine)",
  dbos: "DBOS",
};

/** Figures one child reports: name → number (ms, per second, bytes...). */
export type Metrics = Record<string, number>;

/** What a child is asked to do. */
export interface ChildSpec {
  scenario: string;
  subject: Subject;
  durability: Durability;
  /** Scenario sizes (steps, runs...). */
  params: Record<string, number | string>;
  /** A directory of its own for databases. */
  dir: string;
  /** A file prepared by an earlier child (a template database), if the scenario has one. */
  template?: string;
  /** "prepare": build the template at `template`; "measure" (default): measure and report. */
  phase?: "prepare" | "measure";
  /** Write a CPU profile of the measuring function (not of start-up) to this file. */
  profile?: string;
}

export const RESULT_TAG = "BENCH_RESULT ";

/** Steps per second (and µs per step) of `steps` steps done in `ms`. */
export function rate(steps: number, ms: number): Metrics {
  return { ms, stepsPerSec: (steps / ms) * 1000, usPerStep: (ms * 1000) / steps };
}

/**
 * The CPU profiler of a profiled child (`spec.profile`): a measure calls `start()` just before its timed part
 * and `stop()` just after, so set-up stays out of the profile (without them the whole measure is profiled).
 * `external` is set by a measure that writes the profile itself (another process's).
 */
export const profiler = {
  start: async (): Promise<void> => {},
  stop: async (): Promise<void> => {},
  external: false,
};

/** A measuring function: runs in a fresh child process and returns its figures. */
export type Measure = (spec: ChildSpec) => Promise<Metrics>;

/** A scenario module: one measure (and optionally one prepare) per subject. */
export interface ScenarioModule {
  measure: Partial<Record<Subject, Measure>>;
  prepare?: Partial<Record<Subject, (spec: ChildSpec) => Promise<void>>>;
}

export function median(values: number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid]! : (v[mid - 1]! + v[mid]!) / 2;
}

/** The p-th percentile (0-100) by nearest rank. */
export function percentile(values: number[], p: number): number {
  const v = [...values].sort((a, b) => a - b);
  if (v.length === 0) return Number.NaN;
  const i = Math.min(v.length - 1, Math.max(0, Math.ceil((p / 100) * v.length) - 1));
  return v[i]!;
}

export function num(params: ChildSpec["params"], name: string): number {
  const v = params[name];
  if (typeof v !== "number") throw new Error(`bench: parameter "${name}" missing`);
  return v;
}

/** Copies a SQLite database (and its WAL, if any) to a new path. */
export function copyDatabase(from: string, to: string): void {
  fs.copyFileSync(from, to);
  for (const suffix of ["-wal", "-shm"]) {
    fs.rmSync(to + suffix, { force: true }); // a stale WAL beside the copy would be applied to it
    if (fs.existsSync(from + suffix)) fs.copyFileSync(from + suffix, to + suffix);
  }
}

/**
 * Where to build a cached database that belongs at `file`: a fresh `<file>.partial` (any leftover of an
 * interrupted build removed), renamed to `file` by the builder when done; null when `file` exists already.
 */
export function partialBuild(file: string): string | null {
  if (fs.existsSync(file)) return null;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const partial = `${file}.partial`;
  for (const f of [partial, `${partial}-wal`, `${partial}-shm`]) fs.rmSync(f, { force: true });
  return partial;
}

/** Resolves after the current macrotask queue drains (lets pending commits settle). */
export function settle(ms = 0): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs `count` tasks with at most `width` in flight. */
export async function pool(count: number, width: number, task: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await task(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
}

/** A promise with its resolve function outside. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

/** Forces a full garbage collection when node runs with --expose-gc (twice: weak refs, finalizers). */
export async function gc(): Promise<void> {
  const g = (globalThis as { gc?: () => void }).gc;
  if (!g) return;
  g();
  await settle(50);
  g();
}
