// `--registry module`: loads the user's module (TypeScript too, through tsx) and finds the registry it
// exports. The module must only define and export the registry: one that starts an engine when imported
// (the README's app file does) would run a second engine beside the application, creating runs and
// sending messages twice, and one that opens servers or timers at load is an application, not a registry.
// Both are refused: engine starts are held while the module loads (start-guard.ts), and the process's
// handles are compared before and after the import.

import fs from "node:fs";
import path from "node:path";
import { pathToFileURL } from "node:url";
import type { Registry } from "../registry.js";
import { holdingStarts } from "../start-guard.js";
import { UsageError } from "./mcp-args.js";

/** A registry module that did more than define a registry when imported; the server must exit at once. */
export class RegistrySideEffectsError extends UsageError {}

/** Node's names for handles (process.getActiveResourcesInfo()), as a person reads them. */
const HANDLE_NAMES: Record<string, string> = {
  Timeout: "timer",
  TCPServerWrap: "TCP server",
  TCPSocketWrap: "TCP connection",
  PipeServerWrap: "pipe server",
  PipeWrap: "pipe",
  UDPWrap: "UDP socket",
  ProcessWrap: "child process",
  FSEventWrap: "file watcher",
  StatWatcher: "file watcher",
  SignalWrap: "signal handler",
  MessagePort: "worker thread or message port",
  Worker: "worker thread",
};

/** One-shot operations in flight, not handles a module left open. */
const TRANSIENT = /Req|WriteWrap|ShutdownWrap|Immediate|TickObject/;

/** The process's handles by kind, less `own`: those the caller itself holds (connections its listener accepted). */
function handleCounts(own: Record<string, number> = {}): Map<string, number> {
  const counts = new Map<string, number>();
  for (const kind of process.getActiveResourcesInfo()) {
    if (!TRANSIENT.test(kind)) counts.set(kind, (counts.get(kind) ?? 0) + 1);
  }
  for (const [kind, n] of Object.entries(own)) counts.set(kind, (counts.get(kind) ?? 0) - n);
  return counts;
}

/** The handles open now that were not before, e.g. ["1 timer", "1 TCP server"]. */
function opened(before: Map<string, number>, after: Map<string, number>): string[] {
  const out: string[] = [];
  for (const [kind, n] of after) {
    const more = n - (before.get(kind) ?? 0);
    if (more > 0) out.push(`${more} ${HANDLE_NAMES[kind] ?? kind}${more > 1 ? "s" : ""}`);
  }
  return out;
}

const isRegistry = (v: unknown): v is Registry<Record<string, never>> =>
  typeof v === "object" && v !== null && (v as { kind?: unknown }).kind === "waymark.registry";

const ONLY =
  "Make the module only define and export the registry (export const registry = setup({ use: { ... } })) and start the engine, servers and timers in another file (your app's entry point).";

/**
 * Imports `spec` and returns the registry it exports; refuses a module that starts an engine at load, and
 * (unless `allowHandles`) one that leaves handles open. `ownHandles` counts the handles the caller opens
 * meanwhile (the connections a client makes to the port bound before the import), which are not the module's.
 */
export async function loadRegistry(
  spec: string,
  options: { allowHandles?: boolean; ownHandles?: () => Record<string, number> } = {},
): Promise<Registry<Record<string, never>>> {
  const file = path.resolve(spec);
  if (!fs.existsSync(file)) throw new UsageError(`--registry: no file at ${file}.`);
  const { register } = await import("tsx/esm/api");
  register();
  const before = handleCounts(options.ownHandles?.());
  // A start the module did not await rejects unhandled: that refusal is reported below, not as a crash.
  const onRejection = (reason: unknown) => {
    if ((reason as { code?: unknown } | null)?.code !== "ENGINE_START_REFUSED") throw reason;
  };
  process.on("unhandledRejection", onRejection);
  let loaded: Awaited<ReturnType<typeof holdingStarts<Record<string, unknown>>>>;
  try {
    loaded = await holdingStarts(`waymark mcp was importing ${spec} as its --registry module`, async () => {
      const mod = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
      // Let what the module scheduled at load run (a start in a microtask or setImmediate is caught too).
      for (let i = 0; i < 2; i++) await new Promise((resolve) => setImmediate(resolve));
      return mod;
    });
  } finally {
    process.off("unhandledRejection", onRejection);
  }
  const { result, refused } = loaded;
  if (refused.length > 0) {
    throw new RegistrySideEffectsError(
      `--registry ${spec} starts an engine when imported (${refused[0]} at load), so this server would run a second engine beside your application, creating runs and sending messages twice; nothing was started or opened. ${ONLY}`,
    );
  }
  if (result.status === "rejected") {
    const reason = result.reason as unknown;
    throw new Error(
      `--registry ${spec} failed to load: ${reason instanceof Error ? reason.message : String(reason)}`,
      { cause: reason },
    );
  }
  const left = options.allowHandles ? [] : opened(before, handleCounts(options.ownHandles?.()));
  if (left.length > 0) {
    throw new RegistrySideEffectsError(
      `--registry ${spec} leaves ${left.join(" and ")} open when imported: a module that starts things at load is an application, not a registry, and this server will not run beside it. ${ONLY} If they are harmless (a logger's worker, a client's socket), pass --allow-handles.`,
    );
  }
  const mod = result.value;
  const found = [mod.registry, mod.default, ...Object.values(mod)].find(isRegistry);
  if (!found) {
    throw new UsageError(
      `--registry: ${spec} exports no registry. Export one: export const registry = setup({ use: { ... } }).`,
    );
  }
  return found;
}
