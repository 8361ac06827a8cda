// `waymark mcp --read-only --registry m.ts` as a real process: the registry lends its definitions, and the
// server executes nothing and writes nothing. A sleeping run due now stays asleep, its step's side effect
// does not happen, and the database file's bytes and mtime stay as they were.

import crypto from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { FakeClock } from "../../src/engine/clock.js";
import { openStore } from "../../src/storage/open.js";
import { Closer, call, stdioClient, tempDb, until } from "./helpers.js";
import { registry } from "./napper-registry.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

/** The database file's hash and mtime. */
function snapshot(db: string): string {
  const hash = crypto.createHash("sha256").update(fs.readFileSync(db)).digest("hex");
  return `${hash} ${fs.statSync(db).mtimeMs}`;
}

test("--read-only with --registry: a run due now stays sleeping, no step runs, the file is untouched", async () => {
  const db = tempDb(closer);
  const marker = path.join(path.dirname(db), "marker");
  // The application put the run to sleep two hours ago (its clock), for an hour: it is due now.
  const owner = await registry.start({ database: db, clock: new FakeClock(Date.now() - 2 * 3_600_000) });
  const handle = await owner.getOrCreate("napper", "n-1", { marker });
  await until(async () => (await handle.status()) === "sleeping", "the run asleep");
  await owner.close();
  const before = snapshot(db);

  const { client, stderr } = await stdioClient(closer, [
    "--db",
    db,
    "--read-only",
    "--registry",
    "test/mcp/napper-registry.ts",
  ]);
  const names = (await client.listTools()).tools.map((t) => t.name);
  for (const t of ["send_message", "replay_run", "start_run", "cancel_run", "call_action"]) {
    expect(names).not.toContain(t);
  }
  const workflows = await call(client, "list_workflows");
  expect(JSON.stringify(workflows.structuredContent)).toContain("napper");
  // An executing server takes the due run at start and finishes it within milliseconds; give it ample time.
  await new Promise((r) => setTimeout(r, 1500));
  const run = await call(client, "get_run", { workflow: "napper", key: "n-1" });
  expect(run.structuredContent!.status).toBe("sleeping");
  expect(stderr()).toContain("(read-only) with the definitions of napper");
  await client.close();

  expect(fs.existsSync(marker)).toBe(false);
  expect(snapshot(db)).toBe(before);
  // A WAL database read read-only gets SQLite's shared-memory index and an empty log beside it: nothing written.
  if (fs.existsSync(`${db}-wal`)) expect(fs.statSync(`${db}-wal`).size).toBe(0);
  const store = await openStore(db, { readonly: true });
  closer.add(() => store.close());
  expect((await store.findRun("napper", "n-1"))?.status).toBe("sleeping");
});
