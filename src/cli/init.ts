// `waymark init`: run in an app's folder, writes the MCP entries for Claude Code, Cursor and VS Code
// (merged into files that may hold other servers) and prints Claude Desktop's, all pointing at the app's
// database and, when given or found, its registry module.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { WaymarkError } from "../errors.js";
import { DEFAULT_DATABASE } from "../storage/open.js";
import {
  desktopEntry,
  dotted,
  isUrl,
  type Merged,
  mergeEntry,
  PROJECT_BIN,
  PROJECT_CLIENTS,
  type ServerTarget,
} from "./client-config.js";
import { verbError } from "./verb-error.js";

/** Where init looks for a registry module when --registry is not given, in this order. */
export const REGISTRY_CANDIDATES = [
  "src/workflows.ts",
  "src/registry.ts",
  "workflows.ts",
  "registry.ts",
  "src/workflows.js",
  "workflows.js",
];

/** The name of the server in every file. */
export const SERVER_NAME = "waymark";

const USAGE = `Usage: waymark init [--db <file|url>] [--registry <module> | --no-registry]

Run in your app's folder. Writes the MCP server entry for Claude Code (.mcp.json), Cursor
(.cursor/mcp.json) and VS Code (.vscode/mcp.json), keeping the other servers those files hold, and
prints the entry for Claude Desktop (absolute paths, since it starts outside your project).

  --db <file|url>      the database your app writes (default ${DEFAULT_DATABASE})
  --registry <module>  the module exporting your registry, so clients can start runs and call actions
                       (default: the first of ${REGISTRY_CANDIDATES.join(", ")} that exists)
  --no-registry        attach only: read runs, send messages, cancel and replay (your app executes them)
  -h, --help           show this help
`;

interface Output {
  write(text: string): unknown;
}

/** Where Claude Desktop keeps its configuration on this system. */
function desktopConfigPath(): string {
  if (process.platform === "darwin") return "~/Library/Application Support/Claude/claude_desktop_config.json";
  if (process.platform === "win32") return "%APPDATA%\\Claude\\claude_desktop_config.json";
  return "claude_desktop_config.json (Settings > Developer > Edit Config)";
}

/** The CLI's own script, absolute, as Claude Desktop must start it. */
function cliScript(): { node: string; args: string[] } {
  const self = fileURLToPath(import.meta.url);
  const script = path.join(path.dirname(self), `main${path.extname(self)}`);
  return { node: process.execPath, args: self.endsWith(".ts") ? ["--import", "tsx", script] : [script] };
}

/** `waymark init ...`; resolves the exit code (0 written, 1 a file could not be merged, 2 bad usage). */
export async function run(
  args: string[],
  io: { out: Output; err: Output; cwd: string } = {
    out: process.stdout,
    err: process.stderr,
    cwd: process.cwd(),
  },
): Promise<number> {
  let values: { db?: string; registry?: string; "no-registry"?: boolean; help?: boolean };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        db: { type: "string" },
        registry: { type: "string" },
        "no-registry": { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    verbError(io.err, "init", `${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out.write(USAGE);
    return 0;
  }
  const usage = (why: string) => {
    verbError(io.err, "init", `${why}\n\n${USAGE}`);
    return 2;
  };
  const cwd = io.cwd;
  const inApp = (p: string) => path.resolve(cwd, p);
  const relative = (p: string) => dotted(path.isAbsolute(p) ? p : path.relative(cwd, inApp(p)) || ".");

  if (values.registry !== undefined && values["no-registry"])
    return usage("--registry and --no-registry contradict each other: give one.");
  let registry: string | null = null;
  if (values.registry !== undefined) {
    if (!fs.existsSync(inApp(values.registry)))
      return usage(
        `--registry: no file at ${inApp(values.registry)}. Name the module that exports your registry.`,
      );
    registry = relative(values.registry);
  } else if (!values["no-registry"]) {
    const found = REGISTRY_CANDIDATES.find((c) => fs.existsSync(inApp(c)));
    registry = found ? dotted(found) : null;
  }
  const db = values.db ?? DEFAULT_DATABASE;
  if (db.trim() === "")
    return usage("--db is empty: name the database file your app writes, e.g. --db ./app.db.");
  const target: ServerTarget = { db: isUrl(db) ? db : relative(db), registry };

  // Read and merge every file before writing any, so a file that cannot be merged leaves all untouched.
  const plans: Array<{ file: string; client: string; merged: Merged }> = [];
  try {
    for (const client of PROJECT_CLIENTS) {
      const file = inApp(client.file);
      const existing = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : null;
      const merged = mergeEntry(client.file, existing, client.key, SERVER_NAME, client.entry(target));
      plans.push({ file, client: client.name, merged });
    }
  } catch (err) {
    if (!(err instanceof WaymarkError)) throw err;
    verbError(io.err, "init", err.message);
    return 1;
  }
  for (const plan of plans) {
    if (plan.merged.outcome === "unchanged") continue;
    fs.mkdirSync(path.dirname(plan.file), { recursive: true });
    fs.writeFileSync(plan.file, plan.merged.text);
  }

  const lines: string[] = [];
  const serves = isUrl(target.db) ? "the PostgreSQL database given" : target.db;
  lines.push(
    `waymark init: MCP server "${SERVER_NAME}" for ${serves}, ${
      registry
        ? `with the registry ${registry} (start_run and call_action run your workflows)`
        : "attached (no registry: your app executes the runs)"
    }.`,
  );
  const width = Math.max(...PROJECT_CLIENTS.map((c) => c.file.length));
  for (const plan of plans) {
    const rel = path.relative(cwd, plan.file);
    const kept = plan.merged.others.length
      ? `, kept ${plan.merged.others.map((o) => `"${o}"`).join(", ")}`
      : "";
    lines.push(`  ${rel.padEnd(width)}  ${plan.merged.outcome} (${plan.client})${kept}`);
  }
  const { node, args: script } = cliScript();
  const desktop = desktopEntry(target, node, script, inApp);
  lines.push(
    "",
    `Claude Desktop: add this under "mcpServers" in ${desktopConfigPath()}, then restart it:`,
    JSON.stringify({ [SERVER_NAME]: desktop }, null, 2),
    "",
    `Claude Code asks you to approve a project server the first time it starts in this folder: approve "${SERVER_NAME}" (or later with /mcp).`,
  );
  if (!fs.existsSync(inApp(PROJECT_BIN)))
    lines.push(
      `Note: ${PROJECT_BIN} is not here yet; install waymark in this app (npm install) before a client starts it.`,
    );
  if (!isUrl(target.db) && !fs.existsSync(inApp(target.db)))
    lines.push(
      `Note: ${target.db} does not exist yet. Run your app once so it creates it: waymark mcp serves the database your app writes and refuses a file that is not there (--create starts an empty one on purpose).`,
    );
  if (!registry && !values["no-registry"])
    lines.push(
      `Note: no registry module found (looked for ${REGISTRY_CANDIDATES.join(", ")}); the entries attach only. Give --registry <module> to let clients start runs.`,
    );
  io.out.write(`${lines.join("\n")}\n`);
  return 0;
}
