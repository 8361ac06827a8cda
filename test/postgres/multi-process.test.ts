// Several engine processes on one PostgreSQL database share the work: runs are leased, timers fire once,
// messages are consumed once, and a process killed with SIGKILL has its runs taken over when its
// leases expire. Side effects are counted in a ledger file the workers append to.

import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import type { Attempt } from "../../src/index.js";
import { attach } from "../../src/index.js";
import { closeLater, tempDir, until } from "../helpers.js";
import { sql, tempSchema } from "./pg.js";
import { readLedger, startWorker, type Worker } from "./processes.js";

const RUNS = 300;

it("three engine processes share 300 runs; one killed with SIGKILL midway; every effect happens once", async () => {
  const { schema, url } = await tempSchema();
  const dir = tempDir();
  const ledger = path.join(dir, "ledger.txt");
  const gate = path.join(dir, "gate");
  fs.writeFileSync(ledger, "");
  const count = async (where: string) =>
    Number((await sql(`SELECT count(*) AS n FROM "${schema}".runs WHERE ${where}`))[0].n);

  // Each worker creates (and starts) a third of the runs; they pretend to be three machines, so a dead
  // one's runs are taken over only when its leases expire, as across hosts.
  const workers: Array<ReturnType<typeof startWorker>> = [];
  for (let w = 0; w < 3; w++) {
    const create: Array<[string, string, unknown]> = [];
    for (let n = w; n < RUNS; n += 3) create.push(["job", `job-${n}`, { n }]);
    workers.push(startWorker(url, { ledger, gate, machine: `machine-${w}`, leaseMs: 6000, create }));
  }
  const [w0, victim, w2] = (await Promise.all(workers)) as [Worker, Worker, Worker];
  const engine = closeLater(await attach({ database: url }));

  // One message at a time: each commit notifies every process, and they race to claim the run it wakes.
  const sendGo = async (ns: number[]) => {
    for (const n of ns) {
      const run = await engine.get("job", `job-${n}`);
      await run.send("go", { token: `t${n}` }, { idempotencyKey: `go-${n}` });
    }
  };
  const evens = Array.from({ length: RUNS / 2 }, (_, i) => 2 * i);
  const odds = evens.map((n) => n + 1);

  // Half the runs get their message (some before they wait for it, some after) and pile up in the
  // gated last step, spread over the three processes; the other half wait for theirs.
  await sendGo(evens);
  await until(
    async () => {
      const inLast = new Set(
        readLedger(ledger)
          .filter((l) => l[1] === "last")
          .map((l) => l[2]),
      );
      return inLast.size === RUNS / 2 && (await count("status = 'waiting'")) === RUNS / 2;
    },
    "half the runs to reach the last step and the other half to wait for a message",
    90_000,
  );
  const held = readLedger(ledger).filter((l) => l[0] === String(victim.pid) && l[1] === "last");
  expect(held.length).toBeGreaterThan(0);

  victim.proc.kill("SIGKILL");
  await victim.exited;
  fs.writeFileSync(gate, "");
  await sendGo(odds);
  await until(async () => (await count("status = 'completed'")) === RUNS, "every run to complete", 120_000);

  // Every run finished with its own message.
  const rows = await sql(`SELECT key, output FROM "${schema}".runs ORDER BY id`);
  for (const r of rows) {
    const n = Number(r.key.slice(4));
    expect(JSON.parse(r.output)).toEqual({ n, token: `t${n}` });
  }

  // Each step recorded once: six entries per run, each completed, names unique.
  const entries = await sql(
    `SELECT r.key, e.name, e.status, e.seq, e.attempts FROM "${schema}".entries e JOIN "${schema}".runs r ON r.id = e.run_id`,
  );
  expect(entries).toHaveLength(RUNS * 6);
  const byRun = new Map<string, typeof entries>();
  for (const e of entries) byRun.set(e.key, [...(byRun.get(e.key) ?? []), e]);
  for (const list of byRun.values()) {
    expect(list.map((e) => e.name).sort()).toEqual([
      "after-go",
      "after-nap",
      "first",
      "last",
      "nap",
      "wait-go",
    ]);
    expect(list.every((e) => e.status === "completed")).toBe(true);
  }

  // Each message consumed once, by its run's queue wait.
  const messages = await sql(
    `SELECT r.key, m.consumed_at, m.consumed_by, e.seq AS wait_seq FROM "${schema}".messages m
     JOIN "${schema}".runs r ON r.id = m.run_id
     JOIN "${schema}".entries e ON e.run_id = m.run_id AND e.name = 'wait-go'`,
  );
  expect(messages).toHaveLength(RUNS);
  for (const m of messages) expect(Number(m.consumed_by)).toBe(Number(m.wait_seq));

  // Side effects: every step ran once, except the last step of the runs the killed process held,
  // which ran once more in a surviving process after its lease expired (at least once, as promised).
  const lines = readLedger(ledger);
  const runs = new Map<string, string[][]>();
  for (const l of lines) runs.set(`${l[1]} ${l[2]}`, [...(runs.get(`${l[1]} ${l[2]}`) ?? []), l]);
  const heldRuns = new Set(held.map((l) => l[2]));
  const survivors = new Set([String(w0.pid), String(w2.pid)]);
  for (let n = 0; n < RUNS; n++) {
    for (const step of ["first", "after-nap", "after-go"])
      expect(runs.get(`${step} ${n}`), `${step} ${n}`).toHaveLength(1);
    expect(runs.get(`after-go ${n}`)![0]![3]).toBe(`t${n}`);
    const last = runs.get(`last ${n}`)!;
    if (heldRuns.has(String(n))) {
      expect(last.map((l) => l[0])).toEqual([String(victim.pid), expect.any(String)]);
      expect(survivors.has(last[1]![0]!)).toBe(true);
    } else {
      expect(last).toHaveLength(1);
    }
  }
  // The interrupted attempts show in history.
  for (const e of entries.filter((x) => x.name === "last")) {
    // A step completed on its first attempt stores no attempts (its times and status are that attempt).
    const attempts =
      e.attempts === null ? ["completed"] : (JSON.parse(e.attempts) as Attempt[]).map((a) => a.status);
    expect(attempts).toEqual(heldRuns.has(e.key.slice(4)) ? ["interrupted", "completed"] : ["completed"]);
  }

  // The work was shared: every process ran steps, and runs moved between processes.
  const pids = new Set(lines.map((l) => l[0]));
  expect(pids).toEqual(new Set([String(w0.pid), String(victim.pid), String(w2.pid)]));
  let moved = 0;
  for (let n = 0; n < RUNS; n++)
    if (runs.get(`first ${n}`)![0]![0] !== runs.get(`after-go ${n}`)![0]![0]) moved++;
  expect(moved).toBeGreaterThan(0);
  const perProcess = [w0, victim, w2].map((w) => lines.filter((l) => l[0] === String(w.pid)).length);
  process.stderr.write(
    `multi-process: ${RUNS} runs, ${lines.length} step executions (by process: ${perProcess.join(", ")}; the second was killed), ${held.length} runs held by the killed process taken over after lease expiry, ${moved} runs moved between processes\n`,
  );
}, 300_000);
