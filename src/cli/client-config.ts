// The MCP client entries `waymark init` writes: one per client format, and how each merges into a file
// that may already hold other servers. Pure: text in, text out; init.ts does the reading and writing.

import { ClientConfigError } from "../errors.js";

/** What the server entry runs: the database it serves and, if any, the registry module it loads. */
export interface ServerTarget {
  /** As the app names it: "./app.db", an absolute path, or a PostgreSQL URL. */
  db: string;
  /** Relative to the app ("./src/workflows.ts"), or null to attach without running workflows. */
  registry: string | null;
}

/** A stdio server entry as the clients read it. */
export interface StdioEntry {
  type?: "stdio";
  command: string;
  args: string[];
}

/** A client whose project file init writes. */
export interface ProjectClient {
  name: string;
  /** The file, relative to the app's folder. */
  file: string;
  /** The top-level key that holds the servers by name. */
  key: "mcpServers" | "servers";
  entry(target: ServerTarget): StdioEntry;
}

/** The command the project clients start: the package's own bin, never a bare `npx waymark`. */
export const PROJECT_BIN = "./node_modules/.bin/waymark";

function mcpArgs(target: ServerTarget, at: (p: string) => string): string[] {
  const args = ["mcp", "--stdio", "--db", isUrl(target.db) ? target.db : at(target.db)];
  if (target.registry) args.push("--registry", at(target.registry));
  return args;
}

/** True for a database given as a URL (PostgreSQL), which no client rewrites. */
export function isUrl(db: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\//i.test(db);
}

/** "./x" for a relative path, so a reader sees it is relative to the app's folder. */
export function dotted(p: string): string {
  return p.startsWith("/") || p.startsWith("./") || p.startsWith("../") ? p : `./${p}`;
}

/** VS Code expands ${workspaceFolder}; its servers do not promise to start in the project's folder. */
function inWorkspace(p: string): string {
  return p.startsWith("/") ? p : `\${workspaceFolder}/${p.replace(/^\.\//, "")}`;
}

/**
 * The three project files. Claude Code and Cursor start a project's servers in the project's folder, so
 * their entries hold paths relative to it; VS Code's hold ${workspaceFolder}.
 */
export const PROJECT_CLIENTS: ProjectClient[] = [
  {
    name: "Claude Code",
    file: ".mcp.json",
    key: "mcpServers",
    entry: (t) => ({ type: "stdio", command: PROJECT_BIN, args: mcpArgs(t, dotted) }),
  },
  {
    name: "Cursor",
    file: ".cursor/mcp.json",
    key: "mcpServers",
    entry: (t) => ({ command: PROJECT_BIN, args: mcpArgs(t, dotted) }),
  },
  {
    name: "VS Code",
    file: ".vscode/mcp.json",
    key: "servers",
    entry: (t) => ({ type: "stdio", command: inWorkspace(PROJECT_BIN), args: mcpArgs(t, inWorkspace) }),
  },
];

/**
 * Claude Desktop starts servers outside any project and with a bare PATH: the node binary, the CLI's
 * script and every path are absolute. `cli` starts the CLI under `node`; `resolve` makes a path absolute.
 */
export function desktopEntry(
  target: ServerTarget,
  node: string,
  cli: string[],
  resolve: (p: string) => string,
): StdioEntry {
  return { command: node, args: [...cli, ...mcpArgs(target, resolve)] };
}

/** What merging did to a file's entry. */
export type MergeOutcome = "added" | "updated" | "unchanged";

/** A file's new text, what happened to the entry, and how many other servers it kept. */
export interface Merged {
  text: string;
  outcome: MergeOutcome;
  others: string[];
}

function refuse(file: string, why: string, key: string, name: string, entry: StdioEntry): never {
  const by = JSON.stringify({ [key]: { [name]: entry } }, null, 2);
  throw new ClientConfigError(
    `${file} ${why}, so waymark init wrote nothing. Fix the file (or move it away) and run init again, or add the entry by hand:\n${by}`,
    { file },
  );
}

/**
 * Puts `entry` under `key`.`name` in a file's text (null: no file yet), keeping every other server and
 * top-level key. Text that is not a JSON object (comments included) is refused, never overwritten.
 */
export function mergeEntry(
  file: string,
  existing: string | null,
  key: string,
  name: string,
  entry: StdioEntry,
): Merged {
  let doc: Record<string, unknown> = {};
  if (existing !== null && existing.trim() !== "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(existing);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      refuse(file, `is not valid JSON (${why}; comments are not JSON either)`, key, name, entry);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
      refuse(file, "does not hold a JSON object", key, name, entry);
    doc = parsed as Record<string, unknown>;
  }
  const current = Object.hasOwn(doc, key) ? doc[key] : {};
  if (typeof current !== "object" || current === null || Array.isArray(current))
    refuse(file, `has a "${key}" that is not an object of servers by name`, key, name, entry);
  const servers = current as Record<string, unknown>;
  const before = Object.hasOwn(servers, name) ? JSON.stringify(servers[name]) : undefined;
  const outcome: MergeOutcome =
    before === undefined ? "added" : before === JSON.stringify(entry) ? "unchanged" : "updated";
  const others = Object.keys(servers).filter((k) => k !== name);
  const next = { ...doc, [key]: { ...servers, [name]: entry } };
  return { text: `${JSON.stringify(next, null, 2)}\n`, outcome, others };
}
