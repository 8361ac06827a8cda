// `waymark mcp --http` as a real process serves the inspector beside /mcp, behind its token, read-only
// when asked; `waymark demo` prints where the inspector is.

import { type ChildProcess, spawn } from "node:child_process";
import { afterEach, expect, test } from "vitest";
import { Closer, ROOT, startEngine, tempDb, until } from "../mcp/helpers.js";
import { request } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

function start(args: string[], env: Record<string, string> = {}) {
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", "src/cli/main.ts", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  closer.add(
    () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  );
  const out = { stdout: "", stderr: "" };
  child.stdout!.on("data", (d) => (out.stdout += d));
  child.stderr!.on("data", (d) => (out.stderr += d));
  return out;
}

test("waymark mcp --http --read-only --token-env serves the inspector behind the token, without actions", async () => {
  const db = tempDb(closer);
  const owner = await startEngine(closer, db);
  await owner.getOrCreate("approval", "a1", { amount: 5 });
  await until(async () => (await owner.store.findRun("approval", "a1"))?.status === "waiting", "the wait");

  const out = start(["mcp", "--http", "0", "--db", db, "--read-only", "--token-env", "WAYMARK_TEST_TOKEN"], {
    WAYMARK_TEST_TOKEN: "cli-token",
  });
  const page = await until(
    () => /run inspector at (http:\/\/\S+\/)/.exec(out.stderr)?.[1],
    "the inspector line",
    30_000,
  );
  expect(out.stderr).toContain("?token=<token> (once)");
  expect((await request(page)).status).toBe(401);
  const auth = { authorization: "Bearer cli-token" };
  const meta = await request(`${page}api/meta`, { headers: auth });
  expect(meta.json).toMatchObject({ readOnly: true, attached: true });
  const run = await request(`${page}api/runs/approval/a1`, { headers: auth });
  expect(run.json.run.status).toBe("waiting");
  expect(run.json.waiting[0].messageSchema.required).toEqual(["approve", "by"]);
  const refused = await request(`${page}api/runs/approval/a1/cancel`, { headers: auth, body: {} });
  expect(refused.status).toBe(403);
  expect(out.stdout).toBe("");
});

test("waymark demo --help names the inspector's port option", async () => {
  const out = start(["demo", "--help"]);
  await until(() => out.stdout.includes("--port"), "the usage", 30_000);
  expect(out.stdout).toContain("run inspector");
});

test("waymark --help and waymark mcp --help print to stdout, so they pipe into a pager", async () => {
  const top = start(["--help"]);
  await until(() => top.stdout.includes("Usage: waymark <verb>"), "the verbs on stdout", 30_000);
  const mcp = start(["mcp", "--help"]);
  await until(() => mcp.stdout.includes("Usage: waymark mcp"), "mcp's usage on stdout", 30_000);
});
