// Runs a failure scenario on a fresh SQLite file with a fake clock, and follows a diagnosis's next actions
// through a real MCP client.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Scenario, ScenarioEnv } from "../../fixtures/failures/index.js";
import { driveRun } from "../../fixtures/wait.js";
import type { Diagnosis } from "../../src/diagnosis/index.js";
import { type Engine, internals } from "../../src/engine/engine.js";
import { attach, FakeClock, type RunInfo, setup } from "../../src/index.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { onCleanup, tempDb } from "../helpers.js";

/** A scenario's environment: its workflows started on a fresh database with a fake clock. */
export async function scenarioEnv(scenario: Scenario): Promise<ScenarioEnv> {
  scenario.reset?.();
  onCleanup(() => scenario.reset?.());
  const db = tempDb();
  const clock = new FakeClock();
  const open = async (use: Scenario["use"] | null): Promise<Engine> =>
    use
      ? ((await setup({ use }).start({ database: db, clock })) as unknown as Engine)
      : internals(await attach({ database: db, clock }));
  let engine = await open(scenario.use);
  onCleanup(() => engine.close());
  return {
    get engine() {
      return engine;
    },
    clock,
    db,
    settle: async (run, statuses) => (await driveRun(engine, clock, run, statuses)).info,
    async restart(use) {
      await engine.close();
      engine = await open(use);
      return engine;
    },
  };
}

/** An SDK client connected to a new MCP server over the environment's current engine. */
export async function mcpClient(engine: Engine): Promise<Client> {
  const server = createMcpServer(engine);
  const [a, b] = InMemoryTransport.createLinkedPair();
  await server.connect(a);
  const client = new Client({ name: "waymark-diagnosis-test", version: "1.0.0" });
  await client.connect(b);
  onCleanup(async () => {
    await client.close();
    await server.close();
  });
  return client;
}

/** Calls a tool; throws with its text when the result is an error. */
export async function callTool(client: Client, name: string, args: Record<string, unknown>) {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult & {
    structuredContent?: Record<string, any>;
  };
  if (result.isError) {
    const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
    throw new Error(`${name} ${JSON.stringify(args)} failed: ${text}`);
  }
  return result;
}

/**
 * Does what a diagnosis says, in order: a person's step applies the scenario's fix; tool calls go through
 * MCP, except wait_for_run, which moves the fake clock through the run's wake-ups until it finishes.
 * Returns the run at the end and the actions taken.
 */
export async function followNextActions(
  scenario: Scenario,
  env: ScenarioEnv,
  diagnosis: Diagnosis,
): Promise<{ info: RunInfo; taken: string[] }> {
  let engine = env.engine;
  let client = await mcpClient(engine);
  const taken: string[] = [];
  let fixed = false;
  for (const action of diagnosis.nextActions) {
    if (action.kind === "person") {
      if (!fixed) await scenario.fix?.(env);
      fixed = true;
      taken.push("person");
      if (env.engine !== engine) {
        engine = env.engine;
        client = await mcpClient(engine);
      }
      continue;
    }
    taken.push(action.tool);
    if (action.tool === "wait_for_run") {
      const run = await engine.get(scenario.workflow, scenario.key);
      await env.settle(run, ["completed", "failed", "cancelled"]);
      continue;
    }
    await callTool(client, action.tool, action.args);
  }
  return { info: await (await engine.get(scenario.workflow, scenario.key)).info(), taken };
}
