// Test plumbing: temp databases, engines, SDK clients over an in-memory pair, polling with a deadline.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect } from "vitest";
import { z } from "zod";
import { type Engine, internals } from "../../src/engine/engine.js";
import { createMcpServer, type McpServerOptions } from "../../src/mcp/server.js";
import { TOOLS } from "../../src/mcp/tools/index.js";
import { attach } from "../../src/registry.js";
import { registry } from "./workflows.js";

export const ROOT = path.resolve(import.meta.dirname, "../..");

/** Things to close after each test, newest first. */
export class Closer {
  private readonly fns: Array<() => unknown> = [];
  add<T>(fn: () => unknown, value?: T): T {
    this.fns.push(fn);
    return value as T;
  }
  async closeAll(): Promise<void> {
    while (this.fns.length) {
      const fn = this.fns.pop()!;
      try {
        await fn();
      } catch {
        // keep closing the rest
      }
    }
  }
}

export function tempDb(closer: Closer): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-mcp-"));
  closer.add(() => fs.rmSync(dir, { recursive: true, force: true }));
  return path.join(dir, "test.db");
}

export async function startEngine(closer: Closer, db: string): Promise<Engine> {
  const engine = (await registry.start({ database: db })) as unknown as Engine;
  closer.add(() => engine.close());
  return engine;
}

export async function attachEngine(closer: Closer, db: string): Promise<Engine> {
  const engine = await attach({ database: db });
  closer.add(() => engine.close());
  return internals(engine);
}

export async function connect(
  closer: Closer,
  engine: Engine,
  options: McpServerOptions = {},
  clientCapabilities: Record<string, unknown> = {},
): Promise<Client> {
  const server = createMcpServer(engine, options);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "waymark-test", version: "1.0.0" }, { capabilities: clientCapabilities });
  await client.connect(b);
  closer.add(() => server.close());
  closer.add(() => client.close());
  return client;
}

/** `waymark mcp --stdio` with `args` as a real process, through the SDK's stdio client; stderr collected. */
export async function stdioClient(closer: Closer, args: string[]) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "src/cli/main.ts", "mcp", "--stdio", ...args],
    cwd: ROOT,
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "waymark-stdio-test", version: "1.0.0" });
  await client.connect(transport);
  closer.add(() => client.close());
  return { client, transport, stderr: () => stderr };
}

/** Calls a tool and returns its result, typed. */
export async function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args })) as CallToolResult & {
    structuredContent?: Record<string, any>;
  };
}

export function text(result: CallToolResult): string {
  return result.content
    .filter((c) => c.type === "text")
    .map((c) => (c as { text: string }).text)
    .join("\n");
}

/** Polls `fn` until it returns a truthy value, or throws after a generous deadline. */
export async function until<T>(
  fn: () => T | Promise<T>,
  what: string,
  timeoutMs = 20_000,
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`Timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Each call's arguments parse with its tool's input schema, unchanged and with nothing extra. */
export function expectValidCalls(
  actions: Array<{ kind: string; tool?: string; args?: Record<string, unknown> }>,
): void {
  for (const a of actions) {
    if (a.kind !== "call") continue;
    const tool = TOOLS.find((t) => t.name === a.tool);
    expect(tool, a.tool).toBeDefined();
    expect(z.strictObject(tool!.input).parse(a.args)).toEqual(a.args);
  }
}

/** Removes the temp workspace the demo's agent loop worked in (its path is the run's input), if the demo ran on `db`. */
export async function removeDemoWorkspace(db: string): Promise<void> {
  if (!fs.existsSync(db)) return;
  const engine = await attach({ database: db });
  try {
    const agent = await engine.get("agentLoop", "greet");
    const workspace = ((await agent.info()).input as { workspace?: string } | null)?.workspace;
    if (workspace) fs.rmSync(workspace, { recursive: true, force: true });
  } finally {
    await engine.close();
  }
}
