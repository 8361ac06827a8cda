// `waymark mcp`: serve a database over MCP, beside a running application (attach) or with its workflows.
//
//   waymark mcp [--stdio | --http [host:]port] [--db file] [--create] [--registry module] [--read-only]
//               [--token-env NAME] [--session-idle minutes] [--max-sessions N] [--max-subscriptions N]
//
// Logs go to stderr; in stdio mode stdout carries only the protocol.

import type { Server } from "node:http";
import type { Socket } from "node:net";
import type { WaymarkEngine } from "../engine/api.js";
import type { Definitions } from "../engine/definitions.js";
import { type LogLevel, log } from "../log.js";
import type { HttpHandle } from "../mcp/http.js";
import { inspectorRoot } from "../mcp/links.js";
import { ListenError, listen } from "../mcp/listen.js";
import { createMcpServer } from "../mcp/server.js";
import { claimStdout, serveStdio } from "../mcp/stdio.js";
import { attachWith } from "../registry.js";
import { openStore } from "../storage/open.js";
import { isPostgresUrl } from "../storage/postgres/url.js";
import { databaseProblem } from "./database-arg.js";
import { loadRegistry, RegistrySideEffectsError } from "./load-registry.js";
import { type Args, HELP, parseArgs, UsageError } from "./mcp-args.js";

export { parseArgs } from "./mcp-args.js";

function say(line: string, level: LogLevel = "info"): void {
  log(level, "waymark mcp", line);
}

/**
 * Attaches beside the application, executing nothing; read-only opens a SQLite file read-only, so nothing can
 * be written. A registry's definitions (given with --read-only) only lend their names and schemas.
 */
async function attachTo(args: Args, definitions: Definitions = new Map()): Promise<WaymarkEngine> {
  if (!args.readOnly || args.db === ":memory:" || isPostgresUrl(args.db)) {
    return attachWith({ database: args.db }, definitions);
  }
  return attachWith({ database: await openStore(args.db, { readonly: true }) }, definitions);
}

/** Serves `waymark mcp`: every check that can refuse runs before the database is opened. */
export async function run(argv: string[]): Promise<number> {
  let args: Args | "help";
  try {
    args = parseArgs(argv);
  } catch (err) {
    say(`${(err as Error).message}\n\n${HELP}`, "error");
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
      say(
        `--token-env ${args.tokenEnv}: that environment variable is empty or unset; put the token in it.`,
        "error",
      );
      return 2;
    }
  }
  // The HTTP transport and the inspector are loaded for --http only: over stdio they would only slow the start.
  const httpModule = args.mode === "http" ? await import("../mcp/http.js") : null;
  const refused = httpModule?.bindProblem(args.host, token) || databaseProblem(args);
  if (refused) {
    say(refused, "error");
    return 2;
  }

  // The port is bound before the database opens: a port in use leaves no new file behind.
  let listener: Server | undefined;
  const accepted = new Set<Socket>();
  if (args.mode === "http") {
    try {
      listener = await listen(args.host, args.port);
      // A client may connect while the registry module loads: those sockets are this server's, not the module's.
      listener.on("connection", (socket: Socket) => {
        accepted.add(socket);
        socket.once("close", () => accepted.delete(socket));
      });
    } catch (err) {
      say(err instanceof Error ? err.message : String(err), "error");
      return err instanceof ListenError ? 2 : 1;
    }
  }

  // Over stdio, stdout is the protocol's alone: taken before any user code loads, the rest goes to stderr.
  const protocolOut = args.mode === "stdio" ? claimStdout() : undefined;
  let engine: WaymarkEngine;
  try {
    if (args.registry) {
      const registry = await loadRegistry(args.registry, {
        allowHandles: args.allowHandles,
        ownHandles: () => ({ TCPSocketWrap: listener ? accepted.size : 0 }),
      });
      if (args.readOnly) {
        // Read-only never executes: the code lends its definitions, the database is attached read-only.
        engine = await attachTo(args, registry.definitions);
        say(
          `attached to ${args.db} (read-only) with the definitions of ${engine.registered().join(", ") || "(none)"} from ${args.registry}: reads everything, executes and writes nothing; the application runs the workflows`,
        );
      } else {
        engine = (await registry.start({ database: args.db })) as unknown as WaymarkEngine;
        say(`running workflows ${engine.registered().join(", ") || "(none)"} on ${args.db}`);
      }
    } else {
      engine = await attachTo(args);
      say(
        `attached to ${args.db}${args.readOnly ? " (read-only)" : ""}: reads everything; messages, cancels and replays are carried out by the application that runs the workflows (start_run and call_action need --registry)`,
      );
    }
  } catch (err) {
    say(err instanceof Error ? err.message : String(err), "error");
    listener?.close();
    // What such a module started (servers, timers) would keep this process alive: leave now.
    if (err instanceof RegistrySideEffectsError) process.exit(2);
    return err instanceof UsageError ? 2 : 1;
  }

  // The inspector's root once the HTTP server listens: every session made after that links runs to it.
  let inspectorUrl: string | undefined;
  const factory = () =>
    createMcpServer(engine, {
      readOnly: args.readOnly,
      maxSubscriptions: args.maxSubscriptions,
      ...(inspectorUrl ? { inspectorUrl } : {}),
    });
  let stop!: () => void;
  const stopped = new Promise<void>((resolve) => {
    stop = resolve;
  });
  const onSignal = () => stop();
  process.once("SIGINT", onSignal);
  process.once("SIGTERM", onSignal);

  let http: HttpHandle | null = null;
  try {
    if (httpModule) {
      const { createInspector } = await import("../inspector/index.js");
      http = await httpModule.serveHttp(factory, {
        ...(listener ? { server: listener } : {}),
        host: args.host,
        port: args.port,
        ...(token ? { token } : {}),
        sessionIdleMs: args.sessionIdleMs,
        maxSessions: args.maxSessions,
        mount: createInspector(engine, { readOnly: args.readOnly }),
        metrics: () => engine.metrics.scrape(),
      });
      inspectorUrl = inspectorRoot(http.url, args.publicUrl);
      say(
        `listening on ${http.url}${token ? " (bearer token required)" : ""}${args.readOnly ? " (read-only)" : ""}`,
      );
      say(`run inspector at ${inspectorUrl}${token ? "?token=<token> (once)" : ""}`);
      say(
        `Prometheus metrics at ${http.url.replace(/\/mcp$/, "/metrics")}${token ? " (bearer token required)" : ""}`,
      );
      await stopped;
    } else {
      const session = await serveStdio(factory, process.stdin, protocolOut);
      say(`serving MCP over stdio${args.readOnly ? " (read-only)" : ""}`);
      await Promise.race([session.closed, stopped]);
      await session.close();
    }
  } catch (err) {
    say(err instanceof Error ? err.message : String(err), "error");
    await engine.close().catch(() => {});
    return 1;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
  }
  await http?.close();
  await engine.close();
  say("stopped");
  // Handles the registry module or its steps left open (--allow-handles) must not keep a stopped server alive.
  setTimeout(() => process.exit(process.exitCode ?? 0), 1000).unref();
  return 0;
}
