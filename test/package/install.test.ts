// The package as a new user gets it: `npm pack` the repo, install the tarball into a temporary app with its
// own workflows (offline, from the local npm cache), run them, type-check the app, run `waymark init` there
// and start a real MCP client from every entry it wrote. better-sqlite3 is not compiled again in the app:
// install scripts are skipped and the repo's own build of the same version is copied in (see README).

import { execFile } from "node:child_process";
import fs from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { appManifestAndLock, type PackedManifest, type RepoLock } from "./app-lock.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const APP_SOURCE = path.join(import.meta.dirname, "app");
const run = promisify(execFile);

/** The environment for child npm and node: ours, without what `npm test` set about this repo's package. */
function childEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(npm_package_|npm_lifecycle_|npm_config_local_prefix$|INIT_CWD$)/i.test(k)) env[k] = v;
  return env;
}

/** Runs a command; on failure the error carries its output. */
async function sh(file: string, args: string[], cwd: string, timeout = 180_000): Promise<string> {
  try {
    const { stdout } = await run(file, args, { cwd, env: childEnv(), timeout, maxBuffer: 64 << 20 });
    return stdout;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(
      `${file} ${args.join(" ")} (in ${cwd}) failed: ${e.message}\n${e.stdout ?? ""}\n${e.stderr ?? ""}`,
    );
  }
}

let work: string;
let app: string;
let packed: string[];

beforeAll(async () => {
  work = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-install-"));
  app = path.join(work, "app");
  // `npm pack` runs `prepare` (the build), so the tarball is this tree's code.
  const [info] = JSON.parse(await sh("npm", ["pack", "--json", "--pack-destination", work], ROOT)) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  packed = info!.files.map((f) => f.path);

  fs.cpSync(APP_SOURCE, app, { recursive: true });
  const repoLock = JSON.parse(fs.readFileSync(path.join(ROOT, "package-lock.json"), "utf8")) as RepoLock;
  const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, "package.json"), "utf8")) as PackedManifest;
  const { manifest: appManifest, lock } = appManifestAndLock(repoLock, manifest, `../${info!.filename}`, {
    dependencies: ["zod"],
    devDependencies: ["typescript", "@types/node"],
  });
  fs.writeFileSync(path.join(app, "package.json"), `${JSON.stringify(appManifest, null, 2)}\n`);
  fs.writeFileSync(path.join(app, "package-lock.json"), `${JSON.stringify(lock, null, 2)}\n`);
  await sh("npm", ["ci", "--offline", "--ignore-scripts", "--no-audit", "--no-fund"], app);

  // The one native module: the repo's build of the same better-sqlite3 version, for this same Node.
  const repoSqlite = path.dirname(
    createRequire(path.join(ROOT, "package.json")).resolve("better-sqlite3/package.json"),
  );
  const appSqlite = path.join(app, "node_modules", "better-sqlite3");
  const version = (dir: string) =>
    JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).version;
  expect(version(appSqlite)).toBe(version(repoSqlite));
  fs.mkdirSync(path.join(appSqlite, "build", "Release"), { recursive: true });
  fs.copyFileSync(
    path.join(repoSqlite, "build", "Release", "better_sqlite3.node"),
    path.join(appSqlite, "build", "Release", "better_sqlite3.node"),
  );
}, 300_000);

afterAll(() => {
  if (work) fs.rmSync(work, { recursive: true, force: true });
});

/** Starts the server an MCP client entry describes, the way the client does, and returns its tools. */
async function connect(entry: { command: string; args: string[] }, cwd: string) {
  const transport = new StdioClientTransport({
    command: entry.command,
    args: entry.args,
    cwd,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "waymark-install-test", version: "1.0.0" });
  try {
    await client.connect(transport);
  } catch (err) {
    throw new Error(
      `${entry.command} ${entry.args.join(" ")} did not start an MCP server: ${err}\n${stderr}`,
    );
  }
  return { client, stderr: () => stderr };
}

const stdioEntry = z.object({ command: z.string().min(1), args: z.array(z.string()) }).strict();
/** The formats each client reads, from their documentation. */
const servers = z.record(z.string(), z.looseObject({}));
const FORMATS = {
  ".mcp.json": z.looseObject({ mcpServers: servers }),
  ".cursor/mcp.json": z.looseObject({ mcpServers: servers }),
  ".vscode/mcp.json": z.looseObject({ servers, inputs: z.array(z.unknown()).optional() }),
};
const ENTRIES = {
  ".mcp.json": (doc: any) => stdioEntry.extend({ type: z.literal("stdio") }).parse(doc.mcpServers.waymark),
  ".cursor/mcp.json": (doc: any) => stdioEntry.parse(doc.mcpServers.waymark),
  ".vscode/mcp.json": (doc: any) =>
    stdioEntry.extend({ type: z.literal("stdio") }).parse(doc.servers.waymark),
};

describe("the packed package in a new app", () => {
  it("holds only what an app needs: dist, README, LICENSE", () => {
    const outside = packed.filter(
      (p) => !/^dist\/(src|fixtures)\//.test(p) && !["package.json", "README.md", "LICENSE"].includes(p),
    );
    expect(outside).toEqual([]);
    expect(packed.filter((p) => p.endsWith(".map"))).toEqual([]);
    expect(packed).toEqual(
      expect.arrayContaining(["LICENSE", "README.md", "dist/src/index.d.ts", "dist/src/cli/main.js"]),
    );
    expect(packed).toContain("dist/src/inspector/static/index.html");
  });

  it("runs the app's own workflows, and the app exits once it closes the engine", async () => {
    const out = await sh(process.execPath, ["--import", "tsx", "src/main.ts"], app, 60_000);
    expect(JSON.parse(out.trim())).toEqual({
      status: "completed",
      result: { shipped: true, parcel: "box of 2 mug, to ann" },
    });
  });

  it("type-checks with tsc --noEmit --strict, module nodenext and bundler, lib checks on", async () => {
    const tsc = path.join(app, "node_modules", "typescript", "bin", "tsc");
    const check = (...more: string[]) =>
      sh(process.execPath, [tsc, "-p", ".", "--noEmit", "--strict", ...more], app);
    await Promise.all([check(), check("--module", "preserve", "--moduleResolution", "bundler")]);
  }, 240_000);

  it("waymark init writes each client's file, keeps other servers, and every entry starts a server", async () => {
    fs.mkdirSync(path.join(app, ".vscode"));
    const theirs = { type: "stdio", command: "their-server", args: [] };
    fs.writeFileSync(path.join(app, ".vscode/mcp.json"), JSON.stringify({ inputs: [], servers: { theirs } }));
    fs.writeFileSync(path.join(app, ".mcp.json"), JSON.stringify({ mcpServers: { theirs } }));
    const out = await sh(path.join(app, "node_modules/.bin/waymark"), ["init", "--db", "./app.db"], app);
    expect(out).toContain("with the registry ./src/workflows.ts");
    expect(out).toMatch(/Claude Code asks you to approve a project server the first time/);

    for (const file of Object.keys(FORMATS) as Array<keyof typeof FORMATS>) {
      const doc = FORMATS[file].parse(JSON.parse(fs.readFileSync(path.join(app, file), "utf8")));
      const entry = ENTRIES[file](doc);
      if (file !== ".cursor/mcp.json")
        expect((doc as any)[file === ".mcp.json" ? "mcpServers" : "servers"].theirs).toEqual(theirs);
      // VS Code expands ${workspaceFolder} and its entry holds no relative path: started from elsewhere
      // here. Claude Code and Cursor start a project's server in the project's folder.
      const expand = (s: string) => s.replaceAll(`\${workspaceFolder}`, app);
      const { client, stderr } = await connect(
        { command: expand(entry.command), args: entry.args.map(expand) },
        file === ".vscode/mcp.json" ? os.tmpdir() : app,
      );
      try {
        const tools = (await client.listTools()).tools.map((t) => t.name);
        expect(tools, file).toEqual(
          expect.arrayContaining(["list_runs", "get_history", "start_run", "call_action"]),
        );
        const runs = (await client.callTool({ name: "list_runs", arguments: {} })) as CallToolResult;
        expect(JSON.stringify(runs.content), `${file}\n${stderr()}`).toContain("order-1");
      } finally {
        await client.close();
      }
    }
    expect(JSON.parse(fs.readFileSync(path.join(app, ".vscode/mcp.json"), "utf8")).inputs).toEqual([]);

    // Claude Desktop's entry is printed with absolute paths: it works from any folder.
    const block = out.slice(
      out.indexOf("{", out.indexOf("Claude Desktop")),
      out.indexOf("\n\n", out.indexOf("Claude Desktop")),
    );
    const desktop = stdioEntry.parse(JSON.parse(block).waymark);
    expect(
      [desktop.command, ...desktop.args.filter((a) => a.includes("/"))].every((p) => path.isAbsolute(p)),
    ).toBe(true);
    const { client } = await connect(desktop, os.tmpdir());
    try {
      const runs = (await client.callTool({ name: "list_runs", arguments: {} })) as CallToolResult;
      expect(JSON.stringify(runs.content)).toContain("order-1");
    } finally {
      await client.close();
    }
  }, 180_000);

  it("runs the demo from the installed package (its fixtures ship in dist/fixtures)", async () => {
    const out = await sh(
      path.join(app, "node_modules/.bin/waymark"),
      ["demo", "--once", "--db", "./demo.db"],
      app,
    );
    expect(out).toContain("Seeded; exiting (--once).");
  }, 120_000);
});
