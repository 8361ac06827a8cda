// The arguments of `waymark mcp`, checked before anything opens: a wrong flag or a refused combination
// is a usage error (exit 2) that says what was wrong and how to fix it.

import {
  DEFAULT_HTTP_PORT,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MAX_SUBSCRIPTIONS,
  DEFAULT_SESSION_IDLE_MS,
} from "../mcp/limits.js";
import { DEFAULT_DATABASE } from "../storage/open.js";

/** `waymark mcp --help`. */
export const HELP = `Usage: waymark mcp [--stdio | --http [host:]port] [--db file] [--create] [--registry module [--allow-handles]]
                  [--read-only] [--token-env NAME] [--session-idle minutes] [--max-sessions N] [--max-subscriptions N]

Serves a Waymark database over MCP.
  --stdio              Talk MCP over stdin/stdout (default): what Claude Code, Claude Desktop and Cursor spawn.
  --http [host:]port   Serve Streamable HTTP at http://host:port/mcp (host 127.0.0.1 by default; port 0 picks one),
                       and the run inspector (a web page) at http://host:port/.
  --db file|url        SQLite database file (default ${DEFAULT_DATABASE}) or postgres:// URL: the one your
                       application writes (what its registry.start({ database }) opens). A file that does not
                       exist is refused, so a wrong path never serves an empty database.
  --create             Start a new, empty SQLite database at --db when there is none (on purpose).
  --registry module    A module exporting a registry (setup({ use })); TypeScript is loaded directly. This
                       server then runs the workflows itself. Without it, the server attaches beside the
                       application that owns the database: it reads everything, and its messages, cancels
                       and replays are carried out by that application. The module must only define and
                       export the registry: one that starts an engine, servers or timers when imported is refused.
  --allow-handles      Serve a --registry module that leaves handles open at import (a logger's worker, a
                       client's socket); one that starts an engine is refused all the same.
  --read-only          Hide the tools that write (send_message, replay_run(s), start_run, cancel_run(s), call_action),
                       and the inspector's actions (send, replay, cancel). Never executes or writes: the server
                       attaches (a SQLite file is opened read-only), even with --registry, whose module then
                       only lends its workflows' definitions and schemas.
  --token-env NAME     Require "Authorization: Bearer <token>" over HTTP, the token read from environment
                       variable NAME. Required when binding beyond loopback. Open the inspector once as
                       http://host:port/?token=<token>: a session cookie then carries it.
  --session-idle min   Close an HTTP session after this many minutes with no request and no open stream
                       (default ${DEFAULT_SESSION_IDLE_MS / 60_000}); a client that returns later starts a new session.
  --max-sessions N     Keep at most N HTTP sessions open at once (default ${DEFAULT_MAX_SESSIONS}); past it, an initialize is
                       answered 503 with a message saying so.
  --public-url URL     The address browsers reach this server at (behind a proxy, or bound to 0.0.0.0): the
                       inspector links in answers start with it. Without it a 0.0.0.0 / :: bind links to 127.0.0.1.
  --max-subscriptions N  Resource subscriptions one session may hold at once (default ${DEFAULT_MAX_SUBSCRIPTIONS}).
`;

/** What `waymark mcp` was asked to do. */
export interface Args {
  mode: "stdio" | "http";
  host: string;
  port: number;
  db: string;
  /** --db was given (otherwise db is the default file). */
  dbGiven: boolean;
  /** --create: a missing SQLite file is created empty. */
  create: boolean;
  registry: string | null;
  /** --allow-handles: a registry module may leave handles open at import (never start an engine). */
  allowHandles: boolean;
  readOnly: boolean;
  tokenEnv: string | null;
  sessionIdleMs: number;
  maxSessions: number;
  maxSubscriptions: number;
  /** --public-url: the origin (and path) the inspector links use instead of the bound address. */
  publicUrl: string | null;
}

/** A mistake in the command line: printed with the help, exit status 2. */
export class UsageError extends Error {}

/** Parses `waymark mcp` arguments; throws UsageError for a wrong or conflicting flag. */
export function parseArgs(argv: string[]): Args | "help" {
  const args: Args = {
    mode: "stdio",
    host: "127.0.0.1",
    port: DEFAULT_HTTP_PORT,
    db: DEFAULT_DATABASE,
    dbGiven: false,
    create: false,
    registry: null,
    allowHandles: false,
    readOnly: false,
    tokenEnv: null,
    sessionIdleMs: DEFAULT_SESSION_IDLE_MS,
    maxSessions: DEFAULT_MAX_SESSIONS,
    maxSubscriptions: DEFAULT_MAX_SUBSCRIPTIONS,
    publicUrl: null,
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
  const modes = new Set<string>();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    switch (a) {
      case "--help":
      case "-h":
        return "help";
      case "--stdio":
        args.mode = "stdio";
        modes.add(a);
        break;
      case "--http": {
        args.mode = "http";
        modes.add(a);
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
        args.dbGiven = true;
        break;
      case "--create":
        args.create = true;
        break;
      case "--registry":
        args.registry = value(i++, a);
        break;
      case "--allow-handles":
        args.allowHandles = true;
        break;
      case "--read-only":
        args.readOnly = true;
        break;
      case "--public-url": {
        const v = value(i++, a);
        if (!URL.canParse(v) || !/^https?:$/.test(new URL(v).protocol))
          throw new UsageError(
            `--public-url takes an http(s) URL, e.g. https://waymark.example.com/; got "${v}".`,
          );
        args.publicUrl = v;
        break;
      }
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
  if (modes.size > 1) {
    throw new UsageError(
      "--stdio and --http together: one server talks one transport. Use --stdio for a client that spawns the server (Claude Code, Cursor, Claude Desktop), or --http [host:]port for one that connects to a URL; run two servers for both.",
    );
  }
  if (args.create && args.readOnly) {
    throw new UsageError(
      "--create and --read-only together: a read-only server creates nothing. Drop --read-only to start a new database, or --create to serve an existing one.",
    );
  }
  return args;
}
