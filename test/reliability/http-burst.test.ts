// A burst over Streamable HTTP: 50 concurrent MCP clients, 1,000 tool calls in all, every one answered.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { afterEach, expect, it } from "vitest";
import { serveHttp } from "../../src/mcp/http.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { Closer, call, startEngine, tempDb, until } from "../mcp/helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

it("serves a burst of 1,000 requests from 50 concurrent clients without an error", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  for (let i = 0; i < 20; i++) await engine.getOrCreate("approval", `b-${i}`, { amount: i });
  await until(
    async () => (await engine.listRuns({ status: "waiting", limit: 100 })).runs.length === 20,
    "runs to wait",
  );
  const http = await serveHttp(() => createMcpServer(engine), { port: 0, token: "burst-token" });
  closer.add(() => http.close());

  const clients = await Promise.all(
    Array.from({ length: 50 }, async () => {
      const transport = new StreamableHTTPClientTransport(new URL(http.url), {
        requestInit: { headers: { authorization: "Bearer burst-token" } },
      });
      const client = new Client({ name: "burst", version: "1.0.0" });
      await client.connect(transport);
      closer.add(() => client.close());
      return client;
    }),
  );
  let ok = 0;
  const failures: string[] = [];
  const started = Date.now();
  await Promise.all(
    clients.map(async (client, c) => {
      for (let i = 0; i < 20; i++) {
        const n = c * 20 + i;
        const res =
          n % 3 === 0
            ? await call(client, "list_runs", { workflow: "approval", limit: 5 })
            : n % 3 === 1
              ? await call(client, "get_run", { workflow: "approval", key: `b-${n % 20}` })
              : await call(client, "get_history", { workflow: "approval", key: `b-${n % 20}` });
        if (res.isError) failures.push(JSON.stringify(res.content).slice(0, 200));
        else ok++;
      }
    }),
  );
  process.stderr.write(
    `HTTP burst: ${ok} of 1000 calls from 50 clients answered in ${Date.now() - started} ms\n`,
  );
  expect(failures).toEqual([]);
  expect(ok).toBe(1000);
}, 120_000);
