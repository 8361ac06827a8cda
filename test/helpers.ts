// Shared test helpers: a fresh SQLite file per test, engines that close after it, waiting on engine events, not on time.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach } from "vitest";
import type { EngineEvent } from "../src/index.js";
import type { EntryRow, RunStatus } from "../src/storage/store.js";

const cleanups: Array<() => Promise<void> | void> = [];

afterEach(async () => {
  while (cleanups.length) await cleanups.pop()!();
});

/** Registers something to undo after the current test. */
export function onCleanup(fn: () => Promise<void> | void): void {
  cleanups.push(fn);
}

/** A fresh temp directory, removed after the test. */
export function tempDir(prefix = "waymark-test-"): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  onCleanup(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** A path for a fresh SQLite database file. */
export function tempDb(): string {
  return path.join(tempDir(), "test.db");
}

/** Closes an engine (or anything closable) after the test. */
export function closeLater<T extends { close(): Promise<void> }>(thing: T): T {
  onCleanup(() => thing.close().catch(() => {}));
  return thing;
}

/**
 * Polls `check` on the wall clock until it returns a truthy value, failing with `what` after `timeoutMs`.
 * Only for what no engine event of this process announces: a child process, a server over a socket, a
 * browser. A run of an engine in this process is waited on with fixtures/wait.ts (its events), time moved with a FakeClock and `tick()`.
 */
export async function until<T>(
  check: () => T | Promise<T>,
  what: string,
  timeoutMs = 10_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/**
 * Looks at `check` once per event-loop turn (no timer) until it holds, for a background write that no
 * engine event announces (a step's start marker); fails naming `what` after `turns` turns.
 */
export async function untilWritten<T>(
  check: () => T | Promise<T>,
  what: string,
  turns = 10_000,
): Promise<NonNullable<T>> {
  for (let turn = 0; turn < turns; turn++) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    await new Promise((r) => setImmediate(r));
  }
  throw new Error(`Never saw ${what} (looked on ${turns} turns of the event loop)`);
}

/** Lets a released step function run to its end and commits whatever it queued (no timer). */
export async function settleWrites(engine: { writes: { flush(): Promise<unknown> } }): Promise<void> {
  await new Promise((r) => setImmediate(r));
  await engine.writes.flush();
}

/**
 * Resolves once `count` distinct runs have reported `status` in the engine (or engines sharing a database);
 * subscribe before they get there.
 */
export function runsReached(
  engines: Observable | Observable[],
  status: RunStatus,
  count: number,
): Promise<void> {
  const seen = new Set<number>();
  return new Promise((resolve) => {
    const offs = [engines].flat().map((engine) =>
      engine.on((e) => {
        if (e.type !== "run" || e.status !== status) return;
        seen.add(e.runId);
        if (seen.size < count) return;
        for (const off of offs) off();
        resolve();
      }),
    );
  });
}

/** What `entryReached` needs: an engine's event subscription. */
interface Observable {
  on(listener: (event: EngineEvent) => void): () => void;
}

/**
 * Resolves when the engine reports (once durable) the entry at `path` with `status`: lets a step body or the
 * test wait for another branch's commit instead of guessing with a timer. Subscribe before the run gets there.
 */
export function entryReached(engine: Observable, path: string, status = "completed"): Promise<EntryRow> {
  return new Promise((resolve) => {
    const off = engine.on((e) => {
      if (e.type !== "entry" || e.row.status !== status) return;
      if ((e.row.scope === "" ? e.row.name : `${e.row.scope}/${e.row.name}`) !== path) return;
      off();
      resolve(e.row);
    });
  });
}

/** A value `levels` levels deep, arrays and objects alternating around "bottom", built without recursion. */
export function nested(levels: number): unknown {
  let v: unknown = "bottom";
  for (let i = 0; i < levels; i++) v = i % 2 ? { v } : [v];
  return v;
}
