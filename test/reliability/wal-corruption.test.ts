// SQLite's contract for a damaged WAL, pinned: bytes flipped in a frame of the WAL a killed process left
// make SQLite, at the next open, keep the transactions before that frame and drop it and every later one,
// silently (each frame's checksum chains over the ones before it). No error; the steps whose records were
// dropped run again, each is recorded once, the run completes and the file passes integrity_check. With
// durability "full" the frames were only in the WAL (SQLite's own checkpoints, at 1,000 pages, had not run);
// with "normal" the test waits until the background checkpointer copied every frame into the main file, and
// the records are dropped all the same: the WAL's frames before the bad one are read in preference to it.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import Database from "better-sqlite3";
import { expect, it } from "vitest";
import { tempDir, until } from "../helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

function child(db: string, ledger: string, durability: string, blockAt: number) {
  const proc = spawn(
    process.execPath,
    ["--import", "tsx", "test/reliability/wal-child.ts", db, ledger, durability, String(blockAt)],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let out = "";
  let err = "";
  proc.stdout.on("data", (d) => (out += d));
  proc.stderr.on("data", (d) => (err += d));
  const exited = new Promise<number | null>((resolve) => proc.once("exit", (code) => resolve(code)));
  return { proc, exited, out: () => out, err: () => err };
}

/** The WAL's valid frames (salts matching its header) that end a transaction, 1-based. */
function commitFrames(wal: Buffer): { pageSize: number; commits: number[] } {
  const pageSize = wal.readUInt32BE(8);
  const commits: number[] = [];
  for (let i = 0, at = 32; at + 24 + pageSize <= wal.length; i++, at += 24 + pageSize) {
    if (
      wal.readUInt32BE(at + 8) !== wal.readUInt32BE(16) ||
      wal.readUInt32BE(at + 12) !== wal.readUInt32BE(20)
    )
      break;
    if (wal.readUInt32BE(at + 4) !== 0) commits.push(i + 1);
  }
  return { pageSize, commits };
}

/** From the -shm file: the WAL's last valid frame and how many frames a checkpoint copied into the file. */
function walIndex(db: string): { mxFrame: number; nBackfill: number } {
  const shm = fs.readFileSync(`${db}-shm`);
  return { mxFrame: shm.readUInt32LE(16), nBackfill: shm.readUInt32LE(96) };
}

const lines = (file: string) => fs.readFileSync(file, "utf8").trim().split("\n");

it.each([
  ["full", "only in the WAL"],
  ["normal", "also copied into the main file"],
])(
  "durability %s, frames %s: a flipped WAL frame drops it and every later transaction silently; those steps run again",
  async (durability) => {
    const dir = tempDir();
    const db = path.join(dir, "wal.db");
    const ledger = path.join(dir, "ledger");
    fs.writeFileSync(ledger, "");
    const first = child(db, ledger, durability, 30);
    await until(() => lines(ledger).includes("s30") || first.err(), "step s30 to start", 30_000);
    expect(first.err()).toBe("");
    if (durability === "normal") {
      await until(() => {
        const { mxFrame, nBackfill } = walIndex(db);
        return mxFrame > 0 && nBackfill === mxFrame;
      }, "the background checkpointer to copy every frame");
    } else {
      expect(walIndex(db).nBackfill).toBe(0);
    }
    first.proc.kill("SIGKILL");
    await first.exited;

    // Flip two bytes in the page of the middle transaction's commit frame.
    const wal = fs.readFileSync(`${db}-wal`);
    const { pageSize, commits } = commitFrames(wal);
    expect(commits.length).toBeGreaterThan(20);
    const frame = commits[Math.floor(commits.length / 2)]!;
    const at = 32 + (frame - 1) * (24 + pageSize) + 24 + 100;
    const fd = fs.openSync(`${db}-wal`, "r+");
    fs.writeSync(fd, Buffer.from([wal[at]! ^ 0xff, wal[at + 1]! ^ 0xff]), 0, 2, at);
    fs.closeSync(fd);

    const ranBefore = lines(ledger).length;
    const second = child(db, ledger, durability, -1);
    expect(await second.exited).toBe(0);
    expect(second.err()).toBe(""); // nothing said: SQLite drops the frames without an error
    expect(second.out().trim()).toBe("40");
    const again = lines(ledger).slice(ranBefore);
    // A run of steps ran again from some step before s29 to the end: committed records were dropped
    // (without the damage only s30, interrupted, would run again).
    const from = Number(again[0]!.slice(1));
    expect(from).toBeLessThan(29);
    expect(again).toEqual(Array.from({ length: 40 - from }, (_, i) => `s${from + i}`));

    const check = new Database(db, { readonly: true });
    try {
      expect(check.pragma("integrity_check", { simple: true })).toBe("ok");
      const steps = check.prepare("SELECT name, status FROM entries ORDER BY seq").all() as Array<{
        name: string;
        status: string;
      }>;
      expect(steps.map((s) => s.name)).toEqual(Array.from({ length: 40 }, (_, i) => `s${i}`));
      expect(new Set(steps.map((s) => s.status))).toEqual(new Set(["completed"]));
    } finally {
      check.close();
    }
  },
  60_000,
);
