// `waymark check` as a real process: a waiting run whose code changed under it is found before it wakes.

import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { tempDb } from "../helpers.js";
import { registry } from "./payout-v1.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

function check(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", "check", ...args], {
      cwd: ROOT,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (d) => (stdout += d));
    child.stderr.on("data", (d) => (stderr += d));
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
}

const sha = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** A database holding payout/p-1 waiting for its approval, and a finished payout/p-0. */
async function waitingRun(): Promise<string> {
  const db = tempDb();
  const engine = await registry.start({ database: db, deployCheck: false });
  const done = await engine.getOrCreate("payout", "p-0");
  await done.send("approvals", { by: "ann" });
  await done.result({ timeout: 10_000 });
  const run = await engine.getOrCreate("payout", "p-1");
  await engine.watchRun(run.id, (r) => r.status === "waiting", { timeout: 10_000 });
  await engine.close();
  return db;
}

test("a step renamed under a waiting run: exit 1 naming the run, the entry and the fix; the code as deployed: exit 0; the file is untouched", async () => {
  const db = await waitingRun();
  const before = sha(db);

  const broken = await check(["--db", db, "--registry", "test/cli/payout-renamed.ts"]);
  expect(broken.code).toBe(1);
  expect(broken.stdout).toContain(
    `waymark check: 1 unfinished run in ${db} replayed against test/cli/payout-renamed.ts.`,
  );
  expect(broken.stdout).toContain(
    'FAIL payout/p-1 (waiting, version 1): entry #1 of the root scope: history holds step "load-account", the code asks for step "load-customer"',
  );
  expect(broken.stdout).toContain('if "load-account" was renamed, restore its old name');
  expect(broken.stdout).toContain("1 run would fail when it runs again.");
  expect(broken.stdout).not.toContain("p-0"); // finished runs never run again

  const json = await check(["--db", db, "--registry", "test/cli/payout-renamed.ts", "--json"]);
  expect(json.code).toBe(1);
  expect(JSON.parse(json.stdout)).toMatchObject({
    checked: 1,
    findings: [
      {
        problem: "diverged",
        run: "payout/p-1",
        entry: {
          scope: "",
          position: 1,
          path: "load-account",
          requested: { kind: "step", name: "load-customer" },
        },
      },
    ],
  });

  const fine = await check(["--db", db, "--registry", "test/cli/payout-v1.ts"]);
  expect(fine.stderr).toBe("");
  expect(fine.code).toBe(0);
  expect(fine.stdout).toContain("Every unfinished run matches the registered code.");

  expect(sha(db)).toBe(before);
}, 60_000);

test("bad usage exits 2 and says what to pass; a missing database is not created", async () => {
  const noRegistry = await check(["--db", "x.db"]);
  expect(noRegistry.code).toBe(2);
  expect(noRegistry.stderr).toContain("--registry <module> is required");
  const missing = path.join(path.dirname(tempDb()), "absent.db");
  const noDb = await check(["--db", missing, "--registry", "test/cli/payout-v1.ts"]);
  expect(noDb.code).toBe(2);
  expect(noDb.stderr).toContain(
    `there is no database at ${missing}. Pass the file your application writes with --db.`,
  );
  expect(fs.existsSync(missing)).toBe(false);
});
