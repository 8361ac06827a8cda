// The errors a new user meets with `waymark mcp`, each through a real CLI process: no database is ever
// created silently or by a server that refuses, wrong paths and flag combinations say what to do, and a
// --registry module that starts things at load is refused in one line.

import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { afterEach, describe, expect, test } from "vitest";
import { setup, workflow } from "../../src/index.js";
import { Closer, call, ROOT, startEngine, text, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const MAIN = path.join(ROOT, "src/cli/main.ts");
// Absolute, so a server started in a folder outside the repository finds tsx.
const TSX = ["--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href];

function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-cli-"));
  closer.add(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs `waymark mcp ...args` (or another verb) in `cwd` to its exit (stdin closed), at most 30 s. */
function mcp(
  args: string[],
  cwd = ROOT,
  verb = "mcp",
): Promise<{ code: number | null; stderr: string; ms: number }> {
  const started = Date.now();
  const child = spawn(process.execPath, [...TSX, MAIN, verb, ...args], {
    cwd,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const timer = setTimeout(() => child.kill("SIGKILL"), 30_000);
  return new Promise((resolve) =>
    child.once("exit", (code) => {
      clearTimeout(timer);
      resolve({ code, stderr, ms: Date.now() - started });
    }),
  );
}

/** The files in `dir` (a database creates the file and its -wal / -shm). */
const files = (dir: string) => fs.readdirSync(dir).sort();

describe("no file created by a server that refuses or only reads", () => {
  test("--read-only on a missing file refuses, names the file, and creates nothing", async () => {
    const dir = tempDir();
    const db = path.join(dir, "app.db");
    const r = await mcp(["--stdio", "--read-only", "--db", db]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`There is no database at ${db}`);
    expect(r.stderr).toContain("a read-only server creates none");
    expect(files(dir)).toEqual([]);
  });

  test("--read-only serves an existing file: reads its runs, says read-only, and leaves its bytes as they were", async () => {
    const dir = tempDir();
    const db = path.join(dir, "app.db");
    const owner = await startEngine(closer, db);
    await owner.getOrCreate("sleeper", "s-1");
    await owner.close();
    const before = fs.readFileSync(db);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...TSX, MAIN, "mcp", "--stdio", "--read-only", "--db", db],
      cwd: ROOT,
      stderr: "pipe",
    });
    let stderr = "";
    transport.stderr?.on("data", (d) => (stderr += d));
    const client = new Client({ name: "read-only-test", version: "1.0.0" });
    await client.connect(transport);
    expect(text(await call(client, "list_runs", {}))).toContain("sleeper/s-1");
    await client.close();
    expect(stderr).toContain("(read-only)");
    expect(fs.readFileSync(db).equals(before)).toBe(true);
  });

  test("a refused bind (0.0.0.0 without a token) happens before the file is created, even with --create", async () => {
    const dir = tempDir();
    const r = await mcp(["--http", "0.0.0.0:0", "--create", "--db", path.join(dir, "app.db")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("without a bearer token");
    expect(files(dir)).toEqual([]);
  });

  test("a port in use refuses before the file is created (mcp --http and demo --port), saying how to fix it", async () => {
    const dir = tempDir();
    const holder = http.createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    closer.add(() => new Promise<void>((resolve) => holder.close(() => resolve())));
    const port = (holder.address() as AddressInfo).port;
    const served = await mcp(["--http", `127.0.0.1:${port}`, "--create", "--db", path.join(dir, "inuse.db")]);
    expect(served.code).toBe(2);
    expect(served.stderr).toContain(
      `Cannot listen on 127.0.0.1:${port}: the port is in use. Stop what holds it or choose another port (--http 127.0.0.1:0 picks a free one).`,
    );
    expect(served.stderr).not.toContain("attached to");
    const demo = await mcp(["--db", path.join(dir, "demo.db"), "--port", String(port)], ROOT, "demo");
    expect(demo.code).toBe(2);
    expect(demo.stderr).toContain(`Cannot listen on 127.0.0.1:${port}: the port is in use.`);
    expect(demo.stderr).toContain("(--port 0 picks a free one)");
    expect(files(dir)).toEqual([]);
  });

  test("an argument error happens before the file is created", async () => {
    const dir = tempDir();
    for (const bad of [["--max-sessions", "0"], ["--token-env", "WAYMARK_TEST_UNSET_TOKEN"], ["--bogus"]]) {
      const r = await mcp(["--create", "--db", path.join(dir, "app.db"), ...bad]);
      expect(r.code).toBe(2);
      expect(files(dir)).toEqual([]);
    }
  });
});

describe("waymark mcp never creates a database silently", () => {
  test("no --db and no ./waymark.db: refused, naming the file it looked for and what it should be", async () => {
    const dir = tempDir();
    const r = await mcp(["--stdio"], dir);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`there is no ./waymark.db here (looked for ${path.join(dir, "waymark.db")})`);
    expect(r.stderr).toContain("the file your application writes");
    expect(r.stderr).toContain("--create");
    expect(files(dir)).toEqual([]);
  });

  test("a --db path that does not exist: refused, with and without --registry", async () => {
    const dir = tempDir();
    for (const extra of [[], ["--registry", path.join(ROOT, "test/mcp/workflows.ts")]]) {
      const r = await mcp(["--stdio", "--db", "app.db", ...extra], dir);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`There is no database at ${path.join(dir, "app.db")} (--db app.db)`);
      expect(r.stderr).toContain(`a relative path is taken from the folder the server starts in, ${dir}`);
    }
    expect(files(dir)).toEqual([]);
  });

  test("--create starts an empty one on purpose; its answers say which file they read", async () => {
    const dir = tempDir();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...TSX, MAIN, "mcp", "--stdio", "--create", "--db", "app.db"],
      cwd: dir,
      stderr: "pipe",
    });
    const client = new Client({ name: "create-test", version: "1.0.0" });
    await client.connect(transport);
    closer.add(() => client.close());
    const file = path.join(dir, "app.db");
    expect(text(await call(client, "list_runs", {}))).toContain(`No runs in ${file}.`);
    expect(text(await call(client, "list_runs", { status: "failed" }))).toContain(
      `No runs match in ${file}.`,
    );
    expect(text(await call(client, "list_workflows", {}))).toContain(`${file} has no workflows yet`);
    expect(text(await call(client, "list_failures", {}))).toContain(`in ${file}.`);
    expect(fs.existsSync(file)).toBe(true);
  });

  test("a missing folder: the error says to create it (CLI with and without --create, and the engine)", async () => {
    const dir = tempDir();
    const db = path.join(dir, "data", "app.db");
    const without = await mcp(["--stdio", "--db", db]);
    expect(without.code).toBe(2);
    expect(without.stderr).toContain(`its folder ${path.join(dir, "data")} does not exist either`);
    expect(without.stderr).toContain(`create the folder (mkdir -p "${path.join(dir, "data")}")`);
    const withCreate = await mcp(["--stdio", "--create", "--db", db]);
    expect(withCreate.code).toBe(2);
    expect(withCreate.stderr).toContain(`Create the folder (mkdir -p "${path.join(dir, "data")}")`);

    const registry = setup({ use: { w: workflow({ run: async () => 1 }) } });
    const err = await registry.start({ database: db }).then(
      () => null,
      (e: unknown) => e as { code: string; message: string },
    );
    expect(err?.code).toBe("STORAGE_NO_FOLDER");
    expect(err?.message).toContain(`its folder ${path.join(dir, "data")} does not exist`);
    expect(err?.message).toContain(`Create the folder (mkdir -p "${path.join(dir, "data")}")`);
    expect(files(dir)).toEqual([]);
  });

  test("--stdio together with --http is refused", async () => {
    const dir = tempDir();
    const r = await mcp(["--stdio", "--http", "0", "--create", "--db", path.join(dir, "app.db")]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("--stdio and --http together");
    expect(files(dir)).toEqual([]);
  });
});

describe("a --registry module must only define and export the registry", () => {
  for (const [fixture, what] of [
    ["app-registry.ts", "awaits registry.start() at load, as the README's app file does"],
    ["unawaited-start-registry.ts", "starts an engine at load without awaiting it"],
  ] as const) {
    test(`a module that ${what}: one line, exit 2, no engine, no file`, async () => {
      const dir = tempDir();
      const db = path.join(dir, "app.db");
      const r = await mcp(["--stdio", "--create", "--db", db, "--registry", `test/mcp/${fixture}`]);
      expect(r.code).toBe(2);
      const lines = r.stderr.trim().split("\n");
      expect(lines).toHaveLength(1);
      expect(lines[0]).toContain(
        `--registry test/mcp/${fixture} starts an engine when imported (registry.start() at load)`,
      );
      expect(lines[0]).toContain("only define and export the registry");
      expect(files(dir)).toEqual([]);
    });
  }

  test("a module that opens a server and a timer at load: named in one line, and the server exits at once", async () => {
    const dir = tempDir();
    const db = path.join(dir, "app.db");
    const r = await mcp(["--stdio", "--create", "--db", db, "--registry", "test/mcp/server-registry.ts"]);
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/leaves (1 TCP server and 1 timer|1 timer and 1 TCP server) open when imported/);
    expect(files(dir)).toEqual([]);
  });

  test("--allow-handles serves a module that leaves handles open, and the server still exits when stdin ends", async () => {
    const dir = tempDir();
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [...TSX, MAIN, "mcp", "--stdio", "--create", "--db", path.join(dir, "app.db")].concat([
        "--registry",
        "test/mcp/server-registry.ts",
        "--allow-handles",
      ]),
      cwd: ROOT,
      stderr: "pipe",
    });
    const client = new Client({ name: "allow-handles-test", version: "1.0.0" });
    await client.connect(transport);
    closer.add(() => client.close());
    expect((await call(client, "start_run", { workflow: "greet", key: "g-1" })).isError).toBeFalsy();

    // Without a client's signals: stdin ends, and the module's server and timer do not keep it alive.
    const child = spawn(
      process.execPath,
      [...TSX, MAIN, "mcp", "--stdio", "--db", path.join(dir, "app.db"), "--registry"].concat([
        "test/mcp/server-registry.ts",
        "--allow-handles",
      ]),
      { cwd: ROOT, stdio: ["pipe", "ignore", "pipe"] },
    );
    closer.add(() => child.kill("SIGKILL"));
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    await until(() => stderr.includes("serving MCP over stdio"), "the server to serve", 20_000);
    const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
    child.stdin!.end();
    expect(await exited).toBe(0);
    expect(stderr).toContain("stopped");
  });

  test("waymark check refuses such modules the same way, and exits at once", async () => {
    const dir = tempDir();
    const db = path.join(dir, "app.db");
    await (await startEngine(closer, db)).close();
    for (const fixture of ["app-registry.ts", "server-registry.ts"]) {
      const r = await mcp(["--db", db, "--registry", `test/mcp/${fixture}`], ROOT, "check");
      expect(r.code).toBe(2);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
      expect(r.stderr).toMatch(/starts an engine when imported|leaves .* open when imported/);
    }
  });
});
