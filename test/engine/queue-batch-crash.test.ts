// nextBatch across SIGKILL: a real process holding a partly filled batch is killed, once after the first
// messages were recorded and once right after they were sent (while it may be taking them); a new process
// finishes the batch. Every message is consumed exactly once, the batch holds each once in the order sent,
// and the step after it runs once. On SQLite and PostgreSQL.

import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { internals } from "../../src/engine/engine.js";
import { attach } from "../../src/index.js";
import { closeLater, tempDb, tempDir, until } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const BACKENDS = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];
const child = path.join(import.meta.dirname, "queue-batch-child.ts");

describe.each(BACKENDS)("a batch wait across SIGKILL on $name", ({ database }) => {
  it.each([
    { when: "after three messages were recorded", waitRecorded: true },
    { when: "right after three messages were sent", waitRecorded: false },
  ])(
    "killed $when: each message consumed once, in order, the next step run once",
    async ({ waitRecorded }) => {
      const db = await database();
      const ledger = path.join(tempDir(), "ledger.txt");
      fs.writeFileSync(ledger, "");
      const proc = spawn(process.execPath, ["--import", "tsx", child, db, ledger], { stdio: "inherit" });
      const exited = new Promise((r) => proc.on("exit", r));
      const sender = closeLater(await attach({ database: db }));
      const run = await until(() => sender.get("collect", "c-1").catch(() => null), "the run", 30_000);
      await until(async () => (await run.status()) === "waiting", "the batch wait", 30_000);
      for (const n of [0, 1, 2]) await run.send("items", { n });
      if (waitRecorded) {
        await until(
          async () =>
            (
              (await run.history()).find((e) => e.name === "collect")?.detail as
                | { messageIds?: number[] }
                | undefined
            )?.messageIds?.length === 3,
          "three messages recorded in the batch",
          30_000,
        );
      }
      proc.kill("SIGKILL");
      await exited;
      for (const n of [3, 4]) await run.send("items", { n });

      const { stdout } = await promisify(execFile)(process.execPath, ["--import", "tsx", child, db, ledger], {
        timeout: 60_000,
      });
      expect(JSON.parse(stdout.trim())).toEqual([0, 1, 2, 3, 4]);
      expect(fs.readFileSync(ledger, "utf8").trim().split("\n")).toEqual(["[0,1,2,3,4]"]);
      const store = internals(sender).store;
      const messages = await store.listMessages(run.id, { includeConsumed: true, limit: 100 });
      expect(messages.map((m) => [JSON.parse(m.body).n, m.consumedAt !== null])).toEqual([
        [0, true],
        [1, true],
        [2, true],
        [3, true],
        [4, true],
      ]);
      const recorded = (await run.history()).find((e) => e.name === "collect")!;
      expect((recorded.detail as { messageIds: number[] }).messageIds).toEqual(messages.map((m) => m.id));
    },
    120_000,
  );
});
