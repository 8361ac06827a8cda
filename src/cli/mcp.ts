// `waymark mcp`: serve a database over MCP, beside a running application (attach) or with its workflows.
//
//   waymark mcp [--stdio | --http [host:]port] [--db file] [--registry module] [--read-only] [--token-env NAME]
//                    [--session-idle minutes] [--max-sessions N] [--max-subscriptions N]
//
// Logs go to stderr; in stdio mode stdout carries only the protocol.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { WaymarkEngine } from "../engine/api.js";
import { createInspector } from "../inspector/index.js";
import { DEFAULT_HTTP_PORT, DEFAULT_SESSION_IDLE_MS, type HttpHandle, serveHttp } from "../mcp/http.js";
import { DEFAULT_MAX_SESSIONS, DEFAULT_MAX_SUBSCRIPTIONS } from "../mcp/limits.js";
import { createMcpServer } from "../mcp/server.js";
import { claimStdout, serveStdio } from "../mcp/stdio.js";
import { attach, type Registry } from "../registry.js";
import { DEFAULT_DATABASE } from "../storage/open.js";
import { isPostgresUrl } from "../storage/postgres/connect.js";

const HELP = `Usage: waymark mcp [--stdio | --http [host:]port] [--db file] [--registry module] [--read-only] [--token-env NAME]
                  [--session-idle minutes] [--max-sessions N] [--max-subscriptions N]

Serves a Waymark database over MCP.
  --stdio              Talk MCP over stdin/stdout (default): what Claude Code, Claude Desktop and Cursor spawn.
  --http [host:]port   Serve Streamable HTTP at http://host:port/mcp (host 127.0.0.1 by default; port 0 picks one),
                       and the run inspector (a web page) at http://host:port/.
  --db file|url        SQLite database file (default ${DEFAULT_DATABASE}) or postgres:// URL.
  --registry module    A module exporting a registry (setup({ use })); TypeScript is loaded directly. This
                       server then runs the workflows itself. Without it, the server attaches beside the
                       application that owns the database: it reads everything, and its messages, cancels
                       and replays are carried out by that application.
  --read-only          Hide the tools that write (send_message, replay_run, start_run, cancel_run, call_action),
                       and the inspector's actions (send, replay, cancel).
  --token-env NAME     Require "Authorization: Bearer <token>" over HTTP, the token read from environment
                       variable NAME. Required when binding beyond loopback. Open the inspector once as
                       http://host:port/?token=<token>: a session cookie then carries it.
  --session-idle min   Close an HTTP session after this many minutes with no request and no open stream
                       (default ${DEFAULT_SESSION_IDLE_MS / 60_000}); a client that returns later starts a new session.
  --max-sessions N     Keep at most N HTTP sessions open at once (default ${DEFAULT_MAX_SESSIONS}); past it, an initialize is
                       answered 503 with a message saying so.
  --max-subscriptions N  Resource subscriptions one session may hold at once (default ${DEFAULT_MAX_SUBSCRIPTIONS}).
`;

interface Args {
  mode: "stdio" | "http";
  host: string;
  port: number;
  db: string;
  registry: string | null;
  readOnly: boolean;
  tokenEnv: string | null;
  sessionIdleMs: number;
  maxSessions: number;
  maxSubscriptions: number;
}

class UsageError extends Error {}

export function parseArgs(argv: string[]): Args | "help" {
  const args: Args = {
    mode: "stdio",
    host: "127.0.0.1",
    port: DEFAULT_HTTP_PORT,
    db: DEFAULT_DATABASE,
    registry: null,
    readOnly: false,
    tokenEnv: null,
    sessionIdleMs: DEFAULT_SESSION_IDLE_MS,
    maxSessions: DEFAULT_MAX_SESSIONS,
    maxSubscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
  };
  const whole = (i: number, flag: string) => {
    const v = value(i, flag);
    const n = Number(v);
    if (!Number.isSafeInteger(n) || n < 1)
      throw new UsageError(`${flag} takes a whole number above 0, e.g. 100; got "${v}".`);
    return n;
  };
  const value = (i: number, flag: string) => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith("--")) throw new UsageError(`${flag} needs a value.`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    switch (a) {
      case "--help":
      case "-h":
        return "help";
      case "--stdio":
        args.mode = "stdio";
        break;
      case "--http": {
        args.mode = "http";
        const next = argv[i + 1];
        if (next !== undefined && !next.startsWith("--")) {
          i++;
          const m = /^(?:(.+):)?(\d+)$/.exec(next);
          if (!m)
            throw new UsageError(`--http takes [host:]port, e.g. 3920 or 127.0.0.1:3920; got "${next}".`);
          if (m[1]) args.host = m[1].replace(/^\[(.*)\]$/, "$1");
          args.port = Number(m[2]);
          if (args.port > 65535) throw new UsageError(`Port ${args.port} is out of range (0-65535).`);
        }
        break;
      }
      case "--db":
        args.db = value(i++, a);
        break;
      case "--registry":
        args.registry = value(i++, a);
        break;
      case "--read-only":
        args.readOnly = true;
        break;
      case "--token-env":
        args.tokenEnv = value(i++, a);
        break;
      case "--session-idle": {
        const v = value(i++, a);
        const minutes = Number(v);
        if (!(minutes > 0))
          throw new UsageError(`--session-idle takes a number of minutes above 0, e.g. 30; got "${v}".`);
        args.sessionIdleMs = minutes * 60_000;
        break;
      }
      case "--max-sessions":
        args.maxSessions = whole(i++, a);
        break;
      case "--max-subscriptions":
        args.maxSubscriptions = whole(i++, a);
        break;
      default:
        throw new UsageError(`Unknown option "${a}".`);
    }
  }
  return args;
}

function log(line: string): void {
  process.stderr.write(`waymark mcp: ${line}\n`);
}

/** Loads a registry module (TypeScript too, through tsx) and finds the registry it exports. */
export async function loadRegistry(spec: string): Promise<Registry<Record<string, never>>> {
  const file = path.resolve(spec);
  if (!fs.existsSync(file)) throw new UsageError(`--registry: no file at ${file}.`);
  const { register } = await import("tsx/esm/api");
  register();
  const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  const isRegistry = (v: unknown): v is Registry<Record<string, never>> =>
    typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "waymark.registry";
  const found = [mod.registry, mod.default, ...Object.values(mod)].find(isRegistry);
  if (!found) {
    throw new UsageError(
      `--registry: ${spec} exports no registry. Export one: export const registry = setup({ use: { ... } }).`,
    );
  }
  return found;
}

export async function run(argv: string[]): Promise<number> {
  let args: Args | "help";
  try {
    args = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`waymark mcp: ${(err as Error).message}\n\n${HELP}`);
    return 2;
  }
  if (args === "help") {
    process.stdout.write(HELP);
    return 0;
  }
  let token: string | undefined;
  if (args.tokenEnv) {
    token = process.env[args.tokenEnv];
    if (!token) {
      log(`--token-env ${args.tokenEnv}: that environment variable is empty or unset; put the token in it.`);
      return 2;
    }
  }

  // Over stdio, stdout is the protocol's alone: taken before any user code loads, the rest goes to stderr.
  const protocolOut = args.mode === "stdio" ? claimStdout() : undefined;
  let engine: WaymarkEngine;
  try {
    if (args.registry) {
      const registry = await loadRegistry(args.registry);
      engine = (await registry.start({ database: args.db })) as unknown as WaymarkEngine;
      log(`running workflows ${engine.registered().join(", ") || "(none)"} on ${args.db}`);
    } else {
      if (args.db !== ":memory:" && !isPostgresUrl(args.db) && !fs.existsSync(args.db)) {
        log(`no database at ${args.db} yet: it is created empty. Start your application on the same file.`);
      }
      engine = await attach({ database: args.db });
      log(
        `attached to ${args.db}: reads everything; messages, cancels and replays are carried out by the application that runs the workflows (start_run and call_action need --registry)`,
      );
    }
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    return err instanceof UsageError ? 2 : 1;
  }

  const factory = () =>
    createMcpServer(engine, { readOnly: args.readOnly, maxSubscriptions: args.maxSubscriptions });
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const onSignal = () => stop();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  let http: HttpHandle | null = null;
  try {
    if (args.mode === "http") {
      http = await serveHttp(factory, {
        host: args.host,
        port: args.port,
        ...(token ? { token } : {}),
        sessionIdleMs: args.sessionIdleMs,
        maxSessions: args.maxSessions,
        mount: createInspector(engine, { readOnly: args.readOnly }),
        metrics: () => engine.metrics.scrape(),
      });
      log(
        `listening on ${http.url}${token ? " (bearer token required)" : ""}${args.readOnly ? " (read-only)" : ""}`,
      );
      log(`run inspector at ${http.url.replace(/\/mcp$/, "/")}${token ? "?token=<token> (once)" : ""}`);
      log(
        `Prometheus metrics at ${http.url.replace(/\/mcp$/, "/metrics")}${token ? " (bearer token required)" : ""}`,
      );
      await stopped;
    } else {
      const session = await serveStdio(factory, process.stdin, protocolOut);
      log(`serving MCP over stdio${args.readOnly ? " (read-only)" : ""}`);
      await Promise.race([session.closed, stopped]);
      await session.close();
    }
  } catch (err) {
    log(err instanceof Error ? err.message : String(err));
    await engine.close().catch(() => {});
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  await http?.close();
  await engine.close();
  log("stopped");
  return 0;
}
