// What every tool, resource and prompt works with: the engine, the server's options, and run lookup
// whose errors name the fix in terms of this server's tools.

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { Engine } from "../engine/engine.js";
import type { PublishedWorkflow } from "../engine/runs-api.js";
import type { RunRow } from "../storage/store.js";
import { nameList, ToolError } from "./errors.js";

export interface McpServerOptions {
  /** Hide the tools that write (send_message, replay_run, start_run, cancel_run, call_action). */
  readOnly?: boolean;
  /** Server name reported to clients (default "waymark"). */
  name?: string;
  /** Server version reported to clients. */
  version?: string;
}

export class McpContext {
  constructor(
    readonly engine: Engine,
    readonly options: McpServerOptions,
    /** This session's server (to ask the client for confirmation). */
    readonly server: McpServer,
  ) {}

  /** True when this process has the workflow's code (registry mode), so it can start runs and call actions. */
  hasCode(workflow: string): boolean {
    return this.engine.defs.has(workflow);
  }

  /** Every workflow name known here: registered, published by another process, or holding runs. */
  async workflowNames(): Promise<string[]> {
    const names = new Set<string>(this.engine.defs.keys());
    for (const w of await this.engine.listWorkflows()) names.add(w.name);
    for (const p of (await this.engine.published()).values()) names.add(p.name);
    return [...names].sort();
  }

  /** The latest published definition of a workflow (queues as JSON Schema, actions), if any. */
  async publishedLatest(workflow: string, refresh = false): Promise<PublishedWorkflow | undefined> {
    let best: PublishedWorkflow | undefined;
    for (const p of (await this.engine.published(refresh)).values()) {
      if (p.name === workflow && (!best || p.version > best.version)) best = p;
    }
    return best;
  }

  /** The run addressed by workflow and key, or a ToolError that lists what exists. */
  async run(workflow: string, key: string): Promise<RunRow> {
    const row = await this.engine.store.findRun(workflow, key);
    if (row) return row;
    const names = await this.workflowNames();
    if (!names.includes(workflow)) {
      throw new ToolError(
        "WORKFLOW_NOT_FOUND",
        `There is no workflow "${workflow}". ${names.length ? `Workflows here: ${nameList(names)}.` : "This database has no workflows yet."} Call list_workflows to see them.`,
      );
    }
    const recent = await this.engine.listRuns({ workflow, limit: 8 });
    const keys = recent.runs.map((r) => JSON.stringify(r.key));
    throw new ToolError(
      "RUN_NOT_FOUND",
      `There is no run "${workflow}/${key}" (keys are case-sensitive). ${keys.length ? `Recent keys of "${workflow}": ${keys.join(", ")}${recent.nextCursor ? ", ..." : ""}.` : `Workflow "${workflow}" has no runs yet.`} Find a run with list_runs (workflow "${workflow}", keyContains), or create one with start_run.`,
    );
  }
}
