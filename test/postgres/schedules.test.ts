// Two engine processes sharing one PostgreSQL database, both declaring the schedule "beat" (every second, on
// the wall clock): each firing creates one run and its step runs once, whichever process fires it.

import fs from "node:fs";
import path from "node:path";
import { expect, it } from "vitest";
import { attach } from "../../src/index.js";
import { closeLater, tempDir, until } from "../helpers.js";
import { tempSchema } from "./pg.js";
import { readLedger, startWorker } from "./processes.js";

it("two processes sharing a database fire each firing of a schedule once", async () => {
  const { url } = await tempSchema();
  const ledger = path.join(tempDir(), "ledger.txt");
  fs.writeFileSync(ledger, "");
  const workers = await Promise.all([
    startWorker(url, { ledger, every: "1s" }),
    startWorker(url, { ledger, every: "1s" }),
  ]);
  const beats = () => readLedger(ledger).filter((l) => l[1] === "beat");
  await until(() => beats().length >= 6, "six firings", 60_000);
  for (const w of workers) w.proc.kill("SIGTERM");
  await Promise.all(workers.map((w) => w.exited));

  const keys = beats().map((l) => l[2]!);
  expect(new Set(keys).size).toBe(keys.length); // no firing ran twice
  for (const key of keys) expect(key).toMatch(/^beat@\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.000Z$/);
  const reader = closeLater(await attach({ database: url }));
  const runs = (await reader.listRuns({ workflow: "beat", limit: 1000 })).runs;
  // One run per firing, and every firing's step ran in one process; a completed run's step is in the ledger
  // (the runs fired as the workers stopped may be unfinished: they resume at the next start).
  const runKeys = runs.map((r) => r.key);
  expect(new Set(runKeys).size).toBe(runKeys.length);
  expect(runKeys).toEqual(expect.arrayContaining(keys));
  const completed = runs.filter((r) => r.status === "completed").map((r) => r.key);
  expect(keys).toEqual(expect.arrayContaining(completed));
  expect(completed.length).toBeGreaterThanOrEqual(keys.length - 2);
  const [schedule] = await reader.schedules.list();
  expect(schedule).toMatchObject({ name: "beat", orphaned: false, paused: false });
});
