// `waymark init` in an app folder: the files it writes for each client, merging into files that hold other
// servers, refusing files it cannot read as JSON, and what it tells the user. (The entries starting real
// servers from an installed package: test/package/install.test.ts.)

import fs from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { run } from "../../src/cli/init.js";
import { tempDir } from "../helpers.js";

async function init(cwd: string, ...args: string[]) {
  let out = "";
  let err = "";
  const code = await run(args, { out: { write: (t) => (out += t) }, err: { write: (t) => (err += t) }, cwd });
  return { code, out, err };
}

/** VS Code's variable for the project's folder, as its files hold it. */
const WS = `\${workspaceFolder}`;
const read = (dir: string, file: string) => JSON.parse(fs.readFileSync(path.join(dir, file), "utf8"));

function app(): string {
  const dir = tempDir("waymark-init-");
  fs.mkdirSync(path.join(dir, "src"));
  fs.writeFileSync(path.join(dir, "src/workflows.ts"), "export const registry = null;\n");
  return dir;
}

describe("waymark init", () => {
  it("writes Claude Code's, Cursor's and VS Code's files, with the registry it found", async () => {
    const dir = app();
    const { code, out } = await init(dir, "--db", "app.db");
    expect(code).toBe(0);
    const args = ["mcp", "--stdio", "--db", "./app.db", "--registry", "./src/workflows.ts"];
    expect(read(dir, ".mcp.json")).toEqual({
      mcpServers: { waymark: { type: "stdio", command: "./node_modules/.bin/waymark", args } },
    });
    expect(read(dir, ".cursor/mcp.json")).toEqual({
      mcpServers: { waymark: { command: "./node_modules/.bin/waymark", args } },
    });
    expect(read(dir, ".vscode/mcp.json")).toEqual({
      servers: {
        waymark: {
          type: "stdio",
          command: `${WS}/node_modules/.bin/waymark`,
          args: ["mcp", "--stdio", "--db", `${WS}/app.db`, "--registry", `${WS}/src/workflows.ts`],
        },
      },
    });
    expect(out).toContain("Claude Code asks you to approve a project server the first time");
    // Claude Desktop: absolute node, script and paths, printed, not written.
    const desktop = JSON.parse(out.slice(out.indexOf("{"), out.indexOf("\n\n", out.indexOf("{")))).waymark;
    expect(desktop.command).toBe(process.execPath);
    expect(desktop.args).toEqual(
      expect.arrayContaining([
        "--db",
        path.join(dir, "app.db"),
        "--registry",
        path.join(dir, "src/workflows.ts"),
      ]),
    );
    // The database is not there yet: init says to run the app first, since waymark mcp will not create it.
    expect(out).toContain("./app.db does not exist yet. Run your app once so it creates it");
  });

  it("merges into existing files, keeping other servers and keys; a second run changes nothing", async () => {
    const dir = app();
    fs.writeFileSync(path.join(dir, "app.db"), "");
    fs.mkdirSync(path.join(dir, ".cursor"));
    const other = { command: "other-server", args: ["--flag"] };
    fs.writeFileSync(
      path.join(dir, ".cursor/mcp.json"),
      JSON.stringify({ mcpServers: { other, waymark: { command: "old", args: [] } }, extra: 1 }),
    );
    const first = await init(dir, "--db", "./app.db");
    expect(first.code).toBe(0);
    expect(first.out).toMatch(/\.cursor\/mcp\.json\s+updated \(Cursor\), kept "other"/);
    expect(first.out).toMatch(/\.mcp\.json\s+added \(Claude Code\)/);
    expect(first.out).not.toContain("does not exist yet");
    const cursor = read(dir, ".cursor/mcp.json");
    expect(cursor.extra).toBe(1);
    expect(cursor.mcpServers.other).toEqual(other);
    expect(cursor.mcpServers.waymark.command).toBe("./node_modules/.bin/waymark");
    const before = fs.readFileSync(path.join(dir, ".mcp.json"), "utf8");
    const second = await init(dir, "--db", "./app.db");
    expect(second.out.match(/unchanged/g)).toHaveLength(3);
    expect(fs.readFileSync(path.join(dir, ".mcp.json"), "utf8")).toBe(before);
  });

  it("refuses a file that is not valid JSON and writes none of them", async () => {
    const dir = app();
    fs.mkdirSync(path.join(dir, ".vscode"));
    const jsonc = '{\n  // my servers\n  "servers": {}\n}\n';
    fs.writeFileSync(path.join(dir, ".vscode/mcp.json"), jsonc);
    const { code, err } = await init(dir);
    expect(code).toBe(1);
    expect(err).toContain(".vscode/mcp.json is not valid JSON");
    expect(err).toContain("waymark init wrote nothing");
    expect(err).toContain('"servers"'); // the entry to add by hand
    expect(fs.readFileSync(path.join(dir, ".vscode/mcp.json"), "utf8")).toBe(jsonc);
    expect(fs.existsSync(path.join(dir, ".mcp.json"))).toBe(false);
    expect(fs.existsSync(path.join(dir, ".cursor"))).toBe(false);
  });

  it("refuses servers that are not an object of entries", async () => {
    const dir = app();
    fs.writeFileSync(path.join(dir, ".mcp.json"), JSON.stringify({ mcpServers: [] }));
    const { code, err } = await init(dir);
    expect(code).toBe(1);
    expect(err).toContain('.mcp.json has a "mcpServers" that is not an object of servers by name');
  });

  it("attaches without a registry when told or when none is found, and checks --registry", async () => {
    const dir = app();
    const attached = await init(dir, "--no-registry");
    expect(attached.code).toBe(0);
    expect(read(dir, ".mcp.json").mcpServers.waymark.args).toEqual([
      "mcp",
      "--stdio",
      "--db",
      "./waymark.db",
    ]);
    expect(attached.out).toContain("attached (no registry");

    const bare = tempDir("waymark-init-");
    const none = await init(bare);
    expect(none.out).toContain("Note: no registry module found (looked for src/workflows.ts");

    const missing = await init(dir, "--registry", "src/nope.ts");
    expect(missing.code).toBe(2);
    expect(missing.err).toContain(`--registry: no file at ${path.join(dir, "src/nope.ts")}`);
    const both = await init(dir, "--registry", "src/workflows.ts", "--no-registry");
    expect(both.code).toBe(2);
    expect(both.err).toContain("--registry and --no-registry contradict each other");
  });

  it("passes a PostgreSQL URL through unchanged", async () => {
    const dir = app();
    const url = "postgres://app@127.0.0.1:5432/app?schema=waymark";
    expect((await init(dir, "--db", url)).code).toBe(0);
    expect(read(dir, ".vscode/mcp.json").servers.waymark.args.slice(0, 4)).toEqual([
      "mcp",
      "--stdio",
      "--db",
      url,
    ]);
  });
});
