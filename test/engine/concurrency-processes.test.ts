// Concurrency limits across two real OS processes sharing one database (SQLite file, PostgreSQL schema):
// 20 runs of one customer with limit 2 (three processes) never have more than 2 executing, as the steps' own ledger of
// start/end events proves (max overlap over the ledger's one order of events); and a process SIGKILLed while holding both slots blocks the other process
// until its leases lapse, after which the other process takes its runs over and completes all 20.

import { type ChildProcess, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { closeLater, tempDb, tempDir, until } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const worker = path.join(import.meta.dirname, "concurrency-worker.ts");
const stores = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

interface Event {
  kind: "ready" | "ticked" | "start" | "end" | "killed";
  key: string;
  pid: number;
}

function readLedger(file: string): Event[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [kind, key, pid] = line.split(" ");
      return { kind: kind as Event["kind"], key: key!, pid: Number(pid) };
    });
}

/** The most steps executing at once, over the ledger's order; a "killed" event ends the dead process's steps. */
function maxOverlap(events: Event[]): number {
  const open = new Map<string, number>(); // "pid key" -> pid
  let max = 0;
  for (const e of events) {
    if (e.kind === "start") open.set(`${e.pid} ${e.key}`, e.pid);
    else if (e.kind === "end") open.delete(`${e.pid} ${e.key}`);
    else if (e.kind === "killed") for (const [k, pid] of open) if (pid === e.pid) open.delete(k);
    max = Math.max(max, open.size);
  }
  return max;
}

function start(
  database: string,
  ledger: string,
  mode: "work" | "hang",
  workers = 1,
  maxActive?: number,
): ChildProcess & { done: Promise<string> } {
  const proc = spawn(process.execPath, ["--import", "tsx", worker, database, ledger, mode], {
    stdio: ["ignore", "pipe", "inherit"],
    env: {
      ...process.env,
      WORKERS: String(workers),
      ...(maxActive === undefined ? {} : { MAX_ACTIVE: String(maxActive) }),
    },
  });
  closeLater({ close: async () => void proc.kill("SIGKILL") });
  let out = "";
  proc.stdout!.on("data", (d) => {
    out += String(d);
  });
  const done = new Promise<string>((resolve, reject) => {
    proc.on("exit", (code, signal) =>
      code === 0 ? resolve(out.trim()) : reject(new Error(`worker exited ${code ?? signal}`)),
    );
  });
  done.catch(() => {});
  return Object.assign(proc, { done });
}

describe.each(stores)("a concurrency limit across two processes on $name", ({ database }) => {
  // Three processes that each execute at most one run at a time: together they could run 3 at once, so the
  // limit is what holds them to 2, and 2 at once means two processes each ran one (a process that frees a
  // slot wakes its own scheduler first, so with no cap one process could take every run).
  it("20 runs of one customer with limit 2 never have more than 2 executing", async () => {
    const db = await database();
    const ledger = path.join(tempDir(), "ledger.txt");
    fs.writeFileSync(ledger, "");
    const procs = [0, 1, 2].map(() => start(db, ledger, "work", 3, 1));
    for (const p of procs) expect(await p.done).toBe("done");
    const events = readLedger(ledger);
    const ended = new Set(events.filter((e) => e.kind === "end").map((e) => e.key));
    expect(ended.size).toBe(20);
    expect(maxOverlap(events)).toBeLessThanOrEqual(2);
    // The limit was used (2 at once at some point), so at least two processes executed runs.
    expect(maxOverlap(events)).toBe(2);
    expect(new Set(events.filter((e) => e.kind === "start").map((e) => e.pid)).size).toBeGreaterThanOrEqual(
      2,
    );
  }, 180_000);

  it("a process SIGKILLed while holding both slots: the other waits, takes over after the lease lapses, completes all 20", async () => {
    const db = await database();
    const ledger = path.join(tempDir(), "ledger.txt");
    fs.writeFileSync(ledger, "");
    const a = start(db, ledger, "hang");
    await until(
      () => readLedger(ledger).filter((e) => e.kind === "start").length >= 2,
      "two hung steps",
      60_000,
    );
    const held = readLedger(ledger)
      .filter((e) => e.kind === "start")
      .map((e) => e.key);
    const b = start(db, ledger, "work");
    // B is up and has made a scheduler pass over the 20 runs while A holds both slots: B starts nothing.
    await until(
      () => readLedger(ledger).some((e) => e.kind === "ticked" && e.pid === b.pid),
      "B's first pass",
      60_000,
    );
    expect(
      readLedger(ledger)
        .filter((e) => e.kind === "start")
        .map((e) => e.key),
    ).toEqual(held);
    a.kill("SIGKILL");
    await new Promise((r) => a.on("exit", r));
    fs.appendFileSync(ledger, `killed - ${a.pid} -\n`);
    expect(await b.done).toBe("done");

    const events = readLedger(ledger);
    expect(maxOverlap(events)).toBeLessThanOrEqual(2);
    expect(new Set(events.filter((e) => e.kind === "end").map((e) => e.key)).size).toBe(20);
    // Nothing started between the kill and B's takeover but the two runs A held: they resume first, in B.
    const afterKill = events.slice(events.findIndex((e) => e.kind === "killed") + 1);
    expect(
      afterKill
        .filter((e) => e.kind === "start")
        .slice(0, 2)
        .map((e) => e.key)
        .sort(),
    ).toEqual([...held].sort());
    expect(afterKill.every((e) => e.pid === b.pid)).toBe(true);
    // Before the kill B had made its pass and started nothing: A held both slots.
    const beforeKill = events.slice(
      0,
      events.findIndex((e) => e.kind === "killed"),
    );
    expect(beforeKill.some((e) => e.kind === "ticked" && e.pid === b.pid)).toBe(true);
    expect(beforeKill.filter((e) => e.kind === "start" && e.pid === b.pid)).toEqual([]);
  }, 180_000);
});
