import { execFile, spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { attach } from "../../src/index.js";
import { closeLater, tempDir, until } from "../helpers.js";

const child = path.join(import.meta.dirname, "crash-child.ts");
const parentChild = path.join(import.meta.dirname, "crash-parent.ts");

describe("crash and resume", () => {
  it("a run killed with SIGKILL mid-step resumes: completed steps never run again, the interrupted one runs once more", async () => {
    const dir = tempDir();
    const db = path.join(dir, "crash.db");
    const ledger = path.join(dir, "ledger.txt");
    fs.writeFileSync(ledger, "");

    const proc = spawn(process.execPath, ["--import", "tsx", child, db, ledger, "block"], {
      stdio: "inherit",
    });
    const exited = new Promise((r) => proc.on("exit", r));
    // Wait until the database itself shows step s5 running (its attempt start is durable), then kill.
    await until(
      () => {
        if (!fs.existsSync(db)) return false;
        const conn = new Database(db, { readonly: true });
        try {
          const row = conn.prepare("SELECT status FROM entries WHERE name = 's5'").get() as
            | { status: string }
            | undefined;
          return row?.status === "running";
        } catch {
          return false;
        } finally {
          conn.close();
        }
      },
      "step s5 to be recorded as running",
      20_000,
    );
    proc.kill("SIGKILL");
    await exited;

    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", child, db, ledger, "finish"],
      {
        timeout: 30_000,
      },
    );
    expect(stdout.trim()).toBe('"finished"');

    const ran = fs.readFileSync(ledger, "utf8").trim().split("\n");
    const counts = Object.fromEntries(
      Array.from({ length: 10 }, (_, i) => [`s${i}`, ran.filter((r) => r === `s${i}`).length]),
    );
    expect(counts).toEqual({ s0: 1, s1: 1, s2: 1, s3: 1, s4: 1, s5: 2, s6: 1, s7: 1, s8: 1, s9: 1 });

    const engine = closeLater(await attach({ database: db }));
    const run = await engine.get("tenSteps", "crash-me");
    expect(await run.state()).toEqual({ done: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] });
    const s5 = (await run.history()).find((e) => e.name === "s5")!;
    expect(s5.attempts!.map((a) => a.status)).toEqual(["interrupted", "completed"]);
    expect(s5.attempts![0]!.error!.message).toMatch(/process stopped during this attempt/);
  });

  it("SIGKILL after a child run was created and before the parent recorded it: on resume one child exists and the parent waits for it", async () => {
    const dir = tempDir();
    const db = path.join(dir, "parent.db");
    const killed = spawn(process.execPath, ["--import", "tsx", parentChild, db, "kill"], {
      stdio: "inherit",
    });
    const signal = await new Promise((r) => killed.on("exit", (_code, sig) => r(sig)));
    expect(signal).toBe("SIGKILL");
    const conn = new Database(db, { readonly: true });
    const before = conn.prepare("SELECT workflow, key, parent_run_id AS parent FROM runs ORDER BY id").all();
    const childEntries = conn.prepare("SELECT count(*) FROM entries WHERE kind = 'child'").pluck().get();
    conn.close();
    // The window: the child run is stored with its parent, the parent's entry is not.
    expect(before).toEqual([
      { workflow: "order", key: "o-1", parent: null },
      { workflow: "payment", key: "pay-o-1", parent: 1 },
    ]);
    expect(childEntries).toBe(0);

    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", parentChild, db, "finish"],
      { timeout: 30_000 },
    );
    expect(stdout.trim()).toBe('{"paid":"r-12"}');
    const engine = closeLater(await attach({ database: db }));
    const runs = (await engine.listRuns({ workflow: "payment" })).runs;
    expect(runs.map((r) => [r.key, r.status])).toEqual([["pay-o-1", "completed"]]);
    const parent = await engine.get("order", "o-1");
    const entry = (await parent.history()).find((e) => e.kind === "child")!;
    expect(entry).toMatchObject({ status: "completed", detail: { runId: runs[0]!.id } });
  });
});
