import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { describe, expect, it } from "vitest";
import { internals } from "../../src/engine/engine.js";
import { attach } from "../../src/index.js";
import { closeLater, onCleanup, tempDir, until } from "../helpers.js";

const script = path.join(import.meta.dirname, "engine-proc.ts");
const cli = path.join(import.meta.dirname, "../../src/cli/main.ts");

function engineProc(
  db: string,
  ledger: string,
  owner: string,
  create: string,
  leaseMs: number,
  env: Record<string, string> = {},
) {
  const proc = spawn(
    process.execPath,
    ["--import", "tsx", script, db, ledger, owner, create, String(leaseMs)],
    {
      stdio: ["ignore", "pipe", "inherit"],
      env: { ...process.env, ...env },
    },
  );
  onCleanup(() => {
    proc.kill("SIGKILL");
  });
  let out = "";
  proc.stdout!.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((r) => proc.on("exit", (code) => r(code)));
  return {
    proc,
    exited,
    ready: () => until(() => out.includes("ready\n"), "the engine process to start", 30_000),
    created: () => until(() => out.includes("created\n"), "the engine process to create its runs", 30_000),
  };
}

interface Mark {
  pid: number;
  run: string;
  step: string;
  edge: "start" | "end";
  at: number;
}

function readLedger(file: string): Mark[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const [pid, run, step, edge, at] = l.split("\t");
      return { pid: Number(pid), run: run!, step: step!, edge: edge as "start" | "end", at: Number(at) };
    });
}

/** Step executions as intervals; an execution cut short by a kill has no end. */
function executions(marks: Mark[]) {
  const open = new Map<string, Mark>();
  const out: Array<{ pid: number; run: string; step: string; start: number; end: number | null }> = [];
  for (const m of marks) {
    const k = `${m.pid}\t${m.run}\t${m.step}`;
    if (m.edge === "start") open.set(k, m);
    else {
      const s = open.get(k)!;
      open.delete(k);
      out.push({ pid: m.pid, run: m.run, step: m.step, start: s.at, end: m.at });
    }
  }
  for (const s of open.values()) out.push({ pid: s.pid, run: s.run, step: s.step, start: s.at, end: null });
  return out;
}

describe("processes side by side", () => {
  it("two engine processes on one database share runs but never execute one run at once", async () => {
    const dir = tempDir();
    const db = path.join(dir, "shared.db");
    const ledger = path.join(dir, "ledger.tsv");
    fs.writeFileSync(ledger, "");
    // Each process executes one run at a time, so a run that wakes while its process is busy is taken
    // by the other one: runs move between the processes.
    const go = path.join(dir, "go");
    const a = engineProc(db, ledger, "-", "0:15", 3000, { MAX_ACTIVE: "1", GO_FILE: go });
    const b = engineProc(db, ledger, "-", "15:15", 3000, { MAX_ACTIVE: "1", GO_FILE: go });
    await a.ready();
    await b.ready();
    fs.writeFileSync(go, "");
    expect(await a.exited).toBe(0);
    expect(await b.exited).toBe(0);

    const runs = executions(readLedger(ledger));
    expect(runs).toHaveLength(30 * 6); // every step ran exactly once: no kills here
    expect(new Set(runs.map((r) => `${r.run}/${r.step}`)).size).toBe(180);
    const pids = new Set(runs.map((r) => r.pid));
    expect(pids.size).toBe(2); // both processes did work
    // For each run, executions by different processes never overlap in time.
    const byRun = new Map<string, typeof runs>();
    for (const r of runs) byRun.set(r.run, [...(byRun.get(r.run) ?? []), r]);
    // Runs moved between the processes (a run woken from a sleep is claimed by whichever is first).
    const shared = [...byRun.values()].filter((list) => new Set(list.map((r) => r.pid)).size === 2);
    expect(shared.length).toBeGreaterThan(0);
    for (const [run, list] of byRun) {
      const sorted = list.sort((x, y) => x.start - y.start);
      for (let i = 1; i < sorted.length; i++) {
        expect(
          sorted[i]!.start,
          `run ${run}: ${sorted[i]!.step} began before ${sorted[i - 1]!.step} ended`,
        ).toBeGreaterThanOrEqual(sorted[i - 1]!.end!);
      }
    }
    const check = closeLater(await attach({ database: db }));
    const done = await check.listRuns({ status: "completed", limit: 100 });
    expect(done.runs).toHaveLength(30);
    expect(done.runs.every((r) => (r.state as { done: number }).done === 6)).toBe(true);
  }, 120_000);

  it("when an owner on another machine dies, its runs are taken over only after its lease expires", async () => {
    const dir = tempDir();
    const db = path.join(dir, "shared.db");
    const ledger = path.join(dir, "ledger.tsv");
    fs.writeFileSync(ledger, "");
    const leaseMs = 1500;
    // The owner id names another host, so the survivor cannot tell it died: it must wait for the lease.
    const a = engineProc(db, ledger, "other-host:4242:aaa", "0:20", leaseMs);
    await a.created();
    await until(
      () => readLedger(ledger).filter((m) => m.edge === "end").length >= 10,
      "some steps to finish",
      30_000,
    );
    a.proc.kill("SIGKILL");
    const killedAt = Date.now();
    await a.exited;
    const before = executions(readLedger(ledger));
    const interrupted = before.filter((e) => e.end === null);
    const b = engineProc(db, ledger, "-", "0:0", leaseMs);
    expect(await b.exited).toBe(0);

    const all = executions(readLedger(ledger));
    const bPid = [...new Set(all.map((e) => e.pid))].find((p) => p !== a.proc.pid)!;
    // Runs the dead owner held are resumed by the survivor, not before the lease could have expired.
    for (const cut of interrupted) {
      const resumed = all
        .filter((e) => e.pid === bPid && e.run === cut.run)
        .sort((x, y) => x.start - y.start)[0];
      expect(resumed, `run ${cut.run} was resumed`).toBeDefined();
      expect(resumed!.start).toBeGreaterThanOrEqual(killedAt + leaseMs / 2 - 100);
    }
    // Every step finished; a step ran twice only when the dead owner ran it last (its record was lost
    // with the process, or never written): at least once, never twice by a live process.
    const finished = all.filter((e) => e.end !== null);
    expect(new Set(finished.map((e) => `${e.run}/${e.step}`)).size).toBe(20 * 6);
    const byStep = new Map<string, typeof all>();
    for (const e of all) byStep.set(`${e.run}/${e.step}`, [...(byStep.get(`${e.run}/${e.step}`) ?? []), e]);
    for (const [step, list] of byStep) {
      if (list.length === 1) continue;
      list.sort((x, y) => x.start - y.start);
      expect(list, `${step} ran more than twice`).toHaveLength(2);
      expect(list[0]!.pid, `${step} first ran in the dead process`).toBe(a.proc.pid);
      expect(list[1]!.pid).toBe(bPid);
      expect(list[1]!.start).toBeGreaterThanOrEqual(killedAt);
    }
  }, 120_000);

  it("an attached MCP server sends 10,000 messages while the owner runs: each is consumed exactly once", async () => {
    const dir = tempDir();
    const db = path.join(dir, "shared.db");
    const ledger = path.join(dir, "ledger.tsv");
    fs.writeFileSync(ledger, "");
    const owner = engineProc(db, ledger, "-", "0:0", 5000, { COUNTERS: "50" });
    await owner.created();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: ["--import", "tsx", cli, "mcp", "--stdio", "--db", db],
      stderr: "ignore",
    });
    const client = new Client({ name: "sender", version: "1.0.0" });
    await client.connect(transport);
    onCleanup(() => client.close());
    const jobs: Array<{ key: string; n: number; i: number }> = [];
    for (let i = 0; i < 200; i++)
      for (let k = 0; k < 50; k++) jobs.push({ key: `c-${k}`, n: (i % 7) + 1, i });
    let next = 0;
    let errors = 0;
    await Promise.all(
      Array.from({ length: 25 }, async () => {
        while (next < jobs.length) {
          const job = jobs[next++]!;
          const res = await client.callTool({
            name: "send_message",
            arguments: {
              workflow: "counter",
              key: job.key,
              queue: "add",
              body: { n: job.n },
              idempotencyKey: `${job.key}-${job.i}`,
            },
          });
          if (res.isError) errors++;
        }
      }),
    );
    expect(errors).toBe(0);
    expect(await owner.exited).toBe(0);
    const check = closeLater(await attach({ database: db }));
    const expectedSum = Array.from({ length: 200 }, (_, i) => (i % 7) + 1).reduce((a, b) => a + b, 0);
    const runs = (await check.listRuns({ workflow: "counter", limit: 100 })).runs;
    expect(runs).toHaveLength(50);
    let messages = 0;
    for (const run of runs) {
      expect(run.status).toBe("completed");
      expect(run.state).toEqual({ sum: expectedSum, count: 200 });
      const msgs = await internals(check).store.listMessages(run.id, { includeConsumed: true, limit: 1000 });
      messages += msgs.length;
      expect(msgs.every((m) => m.consumedAt !== null)).toBe(true);
      expect(new Set(msgs.map((m) => m.consumedBy)).size).toBe(200);
    }
    expect(messages).toBe(10_000);
  }, 300_000);
});
