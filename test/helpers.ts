// Shared test helpers: a fresh SQLite file per test, engines that close after it, waiting without sleeping blindly.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterEach } from "vitest";

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

/** Polls `check` until it returns a truthy value, failing with `what` after `timeoutMs`. */
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

/** A value `levels` levels deep, arrays and objects alternating around "bottom", built without recursion. */
export function nested(levels: number): unknown {
  let v: unknown = "bottom";
  for (let i = 0; i < levels; i++) v = i % 2 ? { v } : [v];
  return v;
}
