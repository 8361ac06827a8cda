// What `waymark mcp --stdio` loads to serve its first answers: none of the packages only other paths need
// (issue 21, cold start). prom-client comes with a scrape (or the registry asked for); node-postgres with a
// PostgreSQL URL; croner with a cron schedule; esbuild and @modelcontextprotocol/ext-apps with an MCP Apps
// view's page; the HTTP transport (hono) and the inspector with --http. A real process, its loaded files
// listed by a preload (loaded-modules.mjs). esbuild is not checked here: tsx, which runs the CLI from src/,
// loads it itself (the built CLI does not load it before a view is read).

import fs from "node:fs";
import path from "node:path";
import { afterEach, expect, test } from "vitest";
import { Closer, tempDb } from "./helpers.js";
import { initialize, request, spawnStdio } from "./stdio-helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const PRELOAD = path.join(import.meta.dirname, "loaded-modules.mjs");

/** Packages (node_modules/<name>/) and our own folders a stdio server must not load before it is asked. */
const NOT_AT_START = [
  "node_modules/prom-client/",
  "node_modules/pg/",
  "node_modules/croner/",
  "node_modules/@modelcontextprotocol/ext-apps/",
  "node_modules/hono/",
  "node_modules/@hono/",
  "src/inspector/",
];

test("a stdio server answers initialize, tools/list and tool calls without loading metrics, PostgreSQL, cron, MCP Apps, HTTP or inspector code", async () => {
  const db = tempDb(closer);
  const listFile = `${db}.loaded`;
  const s = spawnStdio(closer, db, {
    nodeFlags: ["--import", PRELOAD],
    env: { WAYMARK_LOADED_FILE: listFile },
  });
  await initialize(s);
  await s.write(request(2, "tools/list"));
  expect(((await s.answerTo(2)).result as { tools: unknown[] }).tools.length).toBeGreaterThan(5);
  // Tool calls count in the metrics (mcpCall): that must not load prom-client either.
  await s.write(request(3, "tools/call", { name: "list_runs", arguments: {} }));
  expect((await s.answerTo(3)).result).toBeTruthy();
  await s.write(request(4, "tools/call", { name: "get_run", arguments: { workflow: "w", key: "k" } }));
  expect((await s.answerTo(4)).result).toBeTruthy();
  s.child.stdin!.end();
  expect(await s.exited).toBe(0);

  const loaded = fs.readFileSync(listFile, "utf8").split("\n").filter(Boolean);
  // The list is real: the server's own modules and the SDK are in it.
  expect(loaded.some((f) => f.includes("src/cli/mcp.ts"))).toBe(true);
  expect(loaded.some((f) => f.includes("node_modules/@modelcontextprotocol/sdk/"))).toBe(true);
  expect(loaded.some((f) => f.includes("node_modules/better-sqlite3/"))).toBe(true);
  const unwanted = loaded.filter((f) => NOT_AT_START.some((p) => f.includes(p)));
  expect(unwanted).toEqual([]);
});
