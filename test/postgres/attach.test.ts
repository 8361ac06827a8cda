// attach() and the MCP server on a PostgreSQL URL, beside an application process that owns the runs:
// they read everything, and the messages they send are consumed by the owner, as on SQLite.

import fs from "node:fs";
import path from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { expect, it } from "vitest";
import { internals } from "../../src/engine/engine.js";
import { attach, InvalidMessageError } from "../../src/index.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { closeLater, onCleanup, tempDir, until } from "../helpers.js";
import { tempSchema } from "./pg.js";
import { readLedger, startWorker } from "./processes.js";

it("attach() and MCP on a postgres URL read the runs and send messages that the owning process consumes", async () => {
  const { url } = await tempSchema();
  const ledger = path.join(tempDir(), "ledger.txt");
  fs.writeFileSync(ledger, "");
  const owner = await startWorker(url, {
    ledger,
    workflows: ["approval"],
    create: [
      ["approval", "inv-1", null],
      ["approval", "inv-2", null],
    ],
  });
  const engine = closeLater(await attach({ database: url }));
  expect(internals(engine).store.kind).toBe("postgres");
  await until(async () => {
    const waiting = await engine.listRuns({ workflow: "approval", status: "waiting" });
    return waiting.runs.length === 2;
  }, "both runs to wait for a decision");

  // Reads: runs, history, what a run waits on, the definitions the owner published.
  const run = await engine.get("approval", "inv-1");
  expect((await run.history()).map((e) => [e.path, e.status])).toEqual([
    ["prepare", "completed"],
    ["await-decision", "waiting"],
  ]);
  expect((await run.info()).waiting).toMatchObject([{ kind: "queue", queue: "decisions" }]);
  expect((await engine.listWorkflows()).map((w) => [w.name, w.queues, w.runs])).toEqual([
    ["approval", ["decisions"], { waiting: 2 }],
  ]);

  // Writes: checked against the published schema here, consumed by the owner there.
  await expect(run.send("decisions", { approve: "yes" } as never)).rejects.toBeInstanceOf(
    InvalidMessageError,
  );
  await run.send("decisions", { approve: true, by: "ann" }, { idempotencyKey: "inv-1" });
  expect(await run.result({ timeout: 20_000 })).toEqual({ approved: true, by: "ann" });

  // The same through an MCP client.
  const server = createMcpServer(engine);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "waymark-test", version: "1.0.0" });
  await client.connect(b);
  onCleanup(async () => {
    await client.close();
    await server.close();
  });
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent?: any };
  const listed = await call("list_runs", { workflow: "approval" });
  expect(
    listed.structuredContent.runs.map((r: { key: string; status: string }) => [r.key, r.status]),
  ).toEqual([
    ["inv-2", "waiting"],
    ["inv-1", "completed"],
  ]);
  const sent = await call("send_message", {
    workflow: "approval",
    key: "inv-2",
    queue: "decisions",
    body: { approve: false, by: "bob" },
  });
  expect(sent.isError).toBeFalsy();
  const done = await call("wait_for_run", {
    workflow: "approval",
    key: "inv-2",
    until: "finished",
    timeoutSeconds: 30,
  });
  expect(done.structuredContent).toMatchObject({ status: "completed", timedOut: false });
  const got = await call("get_run", { workflow: "approval", key: "inv-2" });
  expect(got.structuredContent.output).toEqual({ approved: false, by: "bob" });

  // Each decision was recorded once, by the owning process.
  const records = readLedger(ledger).filter((l) => l[1] === "record");
  expect(records.map((l) => [l[0], l[2], l[3]])).toEqual([
    [String(owner.pid), "inv-1", "ann"],
    [String(owner.pid), "inv-2", "bob"],
  ]);
});

it("waymark mcp --db postgres://... serves the database beside the owning process", async () => {
  const { url } = await tempSchema();
  const ledger = path.join(tempDir(), "ledger.txt");
  fs.writeFileSync(ledger, "");
  await startWorker(url, { ledger, workflows: ["approval"], create: [["approval", "cli-1", null]] });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "src/cli/main.ts", "mcp", "--stdio", "--db", url],
    cwd: path.resolve(import.meta.dirname, "../.."),
    stderr: "pipe",
  });
  let stderr = "";
  transport.stderr?.on("data", (d) => (stderr += d));
  const client = new Client({ name: "waymark-test", version: "1.0.0" });
  await client.connect(transport);
  onCleanup(() => client.close());
  const call = async (name: string, args: Record<string, unknown>) =>
    (await client.callTool({ name, arguments: args })) as CallToolResult & { structuredContent?: any };
  await until(
    async () =>
      (await call("get_run", { workflow: "approval", key: "cli-1" })).structuredContent?.status === "waiting",
    "the run to wait, seen over MCP",
  );
  const sent = await call("send_message", {
    workflow: "approval",
    key: "cli-1",
    queue: "decisions",
    body: { approve: true, by: "stdio" },
  });
  expect(sent.isError).toBeFalsy();
  const done = await call("wait_for_run", {
    workflow: "approval",
    key: "cli-1",
    until: "finished",
    timeoutSeconds: 30,
  });
  expect(done.structuredContent).toMatchObject({ status: "completed" });
  expect(stderr).toContain("attached to postgres://");
});
