// Storage faults: a lock held past the busy timeout, a full disk, a read-only file system, a corrupted
// file. Each gives a clear error at the moment it happens, writes nothing partial, and a run that was
// mid-way resumes correctly once the fault is gone.

import { execFileSync } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { setup, workflow } from "../../src/index.js";
import { closeLater, onCleanup, tempDir, until } from "../helpers.js";

/** Mounts a small tmpfs (root only); returns null where mounting is not allowed. */
function smallDisk(sizeKb: number): string | null {
  const dir = tempDir("waymark-disk-");
  try {
    execFileSync("mount", ["-t", "tmpfs", "-o", `size=${sizeKb}k`, "tmpfs", dir], { stdio: "ignore" });
  } catch {
    return null;
  }
  onCleanup(() => {
    try {
      execFileSync("umount", ["-l", dir], { stdio: "ignore" });
    } catch {
      // already gone
    }
  });
  return dir;
}

const ledger: string[] = [];
const steady = workflow({
  state: { done: [] as number[] },
  run: async (ctx, input: { steps: number; size: number }) => {
    for (let i = 0; i < input.steps; i++) {
      await ctx.step(`s${i}`, (s) => {
        ledger.push(`${ctx.key}:s${i}`);
        s.state.done.push(i);
        return "x".repeat(input.size);
      });
    }
    return ctx.state.done.length;
  },
});
const registry = setup({ use: { steady } });

function integrity(db: string): string {
  const c = new Database(db, { readonly: true });
  try {
    return c.pragma("integrity_check", { simple: true }) as string;
  } finally {
    c.close();
  }
}

describe("storage faults", () => {
  it("a lock held past the busy timeout: writes fail clearly, nothing partial, the run resumes when it is released", async () => {
    const db = path.join(tempDir(), "locked.db");
    const engine = closeLater(await registry.start({ database: db, busyTimeoutMs: 50 }));
    const lock = new Database(db);
    onCleanup(() => {
      lock.close();
    });
    const errors: string[] = [];
    engine.on((e) => {
      if (e.type === "storage-error") errors.push(`${e.code}: ${e.message}`);
    });

    const run = await engine.getOrCreate("steady", "lock-1", { steps: 30, size: 10 });
    await until(async () => (await run.history()).length >= 5, "a few steps");
    lock.exec("BEGIN IMMEDIATE");
    // New work is refused with a clear message while the lock is held.
    await expect(engine.getOrCreate("steady", "lock-2", { steps: 1, size: 1 })).rejects.toThrow(
      /stayed locked by another process past the busy timeout; nothing was written/,
    );
    await until(() => errors.some((e) => e.startsWith("STORAGE_BUSY")), "the engine to report the lock");
    const doneWhileLocked = (await run.history()).length;
    await new Promise((r) => setTimeout(r, 300));
    // Nothing reached the database while it was locked.
    expect((await run.history()).length).toBe(doneWhileLocked);
    lock.exec("ROLLBACK");
    expect(await run.result({ timeout: 20_000 })).toBe(30);
    const history = await run.history();
    expect(history.map((e) => e.name)).toEqual(Array.from({ length: 30 }, (_, i) => `s${i}`));
    expect(await run.state()).toEqual({ done: Array.from({ length: 30 }, (_, i) => i) });
    // A step whose commit failed ran again (at least once), but no step ran more than twice.
    const counts = new Map<string, number>();
    for (const l of ledger.filter((x) => x.startsWith("lock-1:"))) counts.set(l, (counts.get(l) ?? 0) + 1);
    expect(Math.max(...counts.values())).toBeLessThanOrEqual(2);
    expect(integrity(db)).toBe("ok");
  }, 60_000);

  it("a full disk: the failing commit writes nothing, and the run resumes once space is freed", async (ctx) => {
    const disk = smallDisk(2048);
    if (!disk) ctx.skip();
    const db = path.join(disk!, "full.db");
    const engine = closeLater(await registry.start({ database: db }));
    const errors: string[] = [];
    engine.on((e) => {
      if (e.type === "storage-error") errors.push(`${e.code}: ${e.message}`);
    });
    // Leave about 120 KB free, then run steps that record 15 KB each (300 KB in all).
    const free = Number(execFileSync("df", ["--output=avail", "-B1", disk!]).toString().split("\n")[1]);
    fs.writeFileSync(path.join(disk!, "filler"), Buffer.alloc(Math.max(0, free - 120_000)));
    const run = await engine.getOrCreate("steady", "full-1", { steps: 20, size: 15_000 });
    await until(() => errors.some((e) => /^STORAGE_(FULL|IO)/.test(e)), "the disk to fill", 20_000);
    expect(errors.join("\n")).toMatch(/nothing was written/);
    const stuckAt = (await run.history()).filter((e) => e.status === "completed").length;
    expect(stuckAt).toBeLessThan(20);
    fs.rmSync(path.join(disk!, "filler"));
    expect(await run.result({ timeout: 30_000 })).toBe(20);
    const history = await run.history();
    expect(history.map((e) => `${e.name}:${e.status}`)).toEqual(
      Array.from({ length: 20 }, (_, i) => `s${i}:completed`),
    );
    expect(integrity(db)).toBe("ok");
  }, 60_000);

  it("a read-only file system: the engine refuses to start with a clear error and changes nothing", async (ctx) => {
    const disk = smallDisk(4096);
    if (!disk) ctx.skip();
    const db = path.join(disk!, "ro.db");
    const first = await registry.start({ database: db });
    const run = await first.getOrCreate("steady", "ro-1", { steps: 3, size: 1 });
    await run.result({ timeout: 5000 });
    await first.close();
    execFileSync("mount", ["-o", "remount,ro", disk!]);
    const before = fs.readFileSync(db);
    await expect(registry.start({ database: db })).rejects.toThrow(
      /Cannot open ".*ro\.db" for writing|read-only/,
    );
    expect(fs.readFileSync(db).equals(before)).toBe(true);
    execFileSync("mount", ["-o", "remount,rw", disk!]);
    const again = closeLater(await registry.start({ database: db }));
    expect(await (await again.get("steady", "ro-1")).result()).toBe(3);
  }, 60_000);

  it("a corrupted file: a clear error naming the file and how to recover, every time it is opened", async () => {
    const db = path.join(tempDir(), "corrupt.db");
    const first = await registry.start({ database: db });
    for (let i = 0; i < 20; i++)
      await (await first.getOrCreate("steady", `c-${i}`, { steps: 5, size: 2000 })).result();
    await first.close();
    // Clobber pages in the middle of the file (keep the header so it still looks like SQLite).
    const fd = fs.openSync(db, "r+");
    fs.writeSync(fd, Buffer.alloc(16_384, 0xab), 0, 16_384, 8192);
    fs.closeSync(fd);
    for (let attempt = 0; attempt < 2; attempt++) {
      await expect(registry.start({ database: db })).rejects.toThrow(
        /corrupt\.db" is corrupted \(SQLite said: .*\)\. Stop every process using it, then restore it from a backup/,
      );
    }
  });
});
