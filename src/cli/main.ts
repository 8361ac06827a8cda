#!/usr/bin/env node
// The `waymark` command: each verb lives in its own module under src/cli/ and exports `run(args)`.
// `--log-format text|json`, anywhere on the line, applies to every verb's stderr lines (see src/log.ts).

import { log } from "../log.js";
import { takeLogFormat } from "./log-format.js";

const VERBS: Record<string, string> = {
  "apps-host":
    "Try the MCP Apps views by hand: a test host page on 127.0.0.1 for a Waymark MCP server: waymark apps-host --url http://127.0.0.1:4000/mcp [--port n].",
  cancel:
    "Cancel many unfinished runs by signature, workflow, status or keys: a dry run makes a plan, --plan acts: waymark cancel --workflow w --status waiting [--plan TOKEN] [--db file].",
  check:
    "Before a deploy: replay unfinished runs against the new code, list those that would fail: waymark check --registry module [--db file].",
  demo: "Run the sample workflows against a local fake API and serve them (npm start).",
  diagnose:
    "Why a run failed or is stuck, and what to do next: waymark diagnose <workflow>/<key> [--db file].",
  init: "Write the MCP entries for Claude Code, Cursor and VS Code in an app: waymark init [--db file] [--registry module].",
  migrate:
    "Copy a SQLite database into PostgreSQL: waymark migrate --from app.db --to postgres://user@host/db.",
  mcp: "Serve a database over MCP: waymark mcp [--stdio | --http [host:]port] [--db file] [--create] [--registry module].",
  prune:
    "Delete finished runs older than an age, or count them: waymark prune --older-than 30d [--status failed] [--dry-run] [--db file].",
  replay:
    "Replay many failed runs after a fix, by signature, workflow, status or keys: a dry run makes a plan, --plan acts: waymark replay --signature s [--dry-run] [--plan TOKEN] [--db file].",
  runs: "List runs newest first, by workflow, status or tags: waymark runs [--workflow w] [--status s] [--tag name=value]... [--db file].",
  schedules:
    "List the schedules (next due, last run), or pause or resume one: waymark schedules [list | pause <name> | resume <name>] [--db file].",
};

function usage(): string {
  const width = Math.max(...Object.keys(VERBS).map((v) => v.length));
  return `Usage: waymark <verb> [options]\n\n${Object.entries(VERBS)
    .map(([v, d]) => `  ${v.padEnd(width)}  ${d}`)
    .join(
      "\n",
    )}\n\nEvery verb takes --log-format text|json: its stderr lines as text (the default) or one JSON object\na line (time, level, source, msg and fields).\nRun "waymark <verb> --help" for a verb's options.\n`;
}

async function main(given: string[]): Promise<number> {
  const argv = takeLogFormat(given);
  if (!Array.isArray(argv)) {
    log("error", "waymark", argv.problem);
    return 2;
  }
  const [verb, ...rest] = argv;
  if (!verb || verb === "--help" || verb === "-h" || verb === "help") {
    // Asked for, help goes to stdout (so it pipes into less); without a verb it is a usage error.
    (verb ? process.stdout : process.stderr).write(usage());
    return verb ? 0 : 2;
  }
  if (!Object.hasOwn(VERBS, verb)) {
    log("error", "waymark", `unknown verb "${verb}".\n\n${usage()}`);
    return 2;
  }
  const mod = (await import(`./${verb}.js`)) as { run(args: string[]): Promise<number> };
  return mod.run(rest);
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code !== 0) process.exitCode = code;
  },
  (err: unknown) => {
    log("error", "waymark", err instanceof Error ? err.message : String(err));
    process.exitCode = 1;
  },
);
