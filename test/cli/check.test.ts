// `waymark check` as a real process: a waiting run whose code changed under it is found before it wakes.

import { createHash } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { expect, test } from "vitest";
import { tempDb } from "../helpers.js";
import { check, waitingRun } from "./run-check.js";

const sha = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

test("a step renamed under a waiting run: exit 1 naming the run, the entry and the fix; the code as deployed: exit 0; the file is untouched", async () => {
  const db = await waitingRun();
  const before = sha(db);

  const broken = await check(["--db", db, "--registry", "test/cli/payout-renamed.ts"]);
  expect(broken.code).toBe(1);
  expect(broken.stdout).toContain(
    `waymark check: 1 unfinished run in ${db} replayed against test/cli/payout-renamed.ts.`,
  );
  expect(broken.stdout).toContain(
    'FAIL payout/p-1 (waiting, version 1): entry #1 of the root scope: history holds a step named "load-account"; the code asks for one named "load-customer"',
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

test("a queue wait renamed: named as a queue wait with its name, not as the queue", async () => {
  const db = await waitingRun();
  const broken = await check(["--db", db, "--registry", "test/cli/payout-wait-renamed.ts"]);
  expect(broken.code).toBe(1);
  expect(broken.stdout).toContain(
    'entry #2 of the root scope: history holds a queue wait named "await-approval"; the code asks for one named "wait-approval"',
  );
  expect(broken.stdout).not.toContain('queue "await-approval"');
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
