// What every tool, resource and prompt works with: the engine, the server's options, and run lookup
// whose errors name the fix in terms of this server's tools.

import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { NextAction } from "../diagnosis/index.js";
import type { WaymarkEngine } from "../engine/api.js";
import type { PublishedWorkflow } from "../engine/listing.js";
import type { RunRow } from "../storage/store.js";
import { nameList, ToolError } from "./errors.js";
import { quote } from "./format.js";

export interface McpServerOptions {
  /** Hide the tools that write (send_message, replay_run(s), start_run, cancel_run(s), call_action). */
  readOnly?: boolean;
  /** Server name reported to clients (default "waymark"). */
  name?: string;
  /** Server version reported to clients. */
  version?: string;
  /**
   * The run inspector's root URL (e.g. http://127.0.0.1:3920/) when this HTTP server serves it: answers about a
   * run then link to its page there. Unset over stdio: no links.
   */
  inspectorUrl?: string;
  /** Subscriptions one session may hold at once (default DEFAULT_MAX_SUBSCRIPTIONS in limits.ts). */
  maxSubscriptions?: number;
}

export class McpContext {
  constructor(
    readonly engine: WaymarkEngine,
    readonly options: McpServerOptions,
    /** This session's server (to ask the client for confirmation). */
    readonly server: McpServer,
    /** Names of the tools this server offers (write tools are left out when readOnly). */
    readonly tools: ReadonlySet<string>,
  ) {}

  /** The database this server reads, as its user finds it: an absolute file path, or the URL without its password. */
  get database(): string {
    return this.engine.database();
  }

  /** True when this server offers the tool: a read-only server hides the write tools. */
  offers(tool: string): boolean {
    return this.tools.has(tool);
  }

  /**
   * Next actions fit for this server: every call to a tool it does not offer (a write tool on a read-only
   * server) becomes a step for a person, so a model is never told to call a tool it cannot see. Consecutive
   * hidden calls (a dry run, then the replay) become one step; the read calls after them stay as they are.
   */
  forServer(actions: readonly NextAction[]): NextAction[] {
    const out: NextAction[] = [];
    let hidden: Array<Extract<NextAction, { kind: "call" }>> = [];
    const flush = () => {
      if (!hidden.length) return;
      const tools = [...new Set(hidden.map((a) => a.tool))];
      const calls = hidden.map((a) => `${a.tool} ${JSON.stringify(a.args)} (${a.why})`).join("; then ");
      out.push({
        kind: "person",
        change: `This server is read-only and does not offer ${tools.join(" or ")}, so do not call ${tools.length > 1 ? "them" : "it"} here. Ask the user to do this with a writable Waymark server (waymark mcp without --read-only): ${calls}.`,
      });
      hidden = [];
    };
    for (const a of actions) {
      if (a.kind === "call" && !this.offers(a.tool)) {
        hidden.push(a);
        continue;
      }
      flush();
      out.push(a);
    }
    flush();
    return out;
  }

  /** True when this process has the workflow's code (registry mode), so it can start runs and call actions. */
  hasCode(workflow: string): boolean {
    return this.engine.registered().includes(workflow);
  }

  /** Every workflow name known here: registered, published by another process, or holding runs. */
  async workflowNames(): Promise<string[]> {
    const names = new Set<string>(this.engine.registered());
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
    const row = await this.engine.findRun(workflow, key);
    if (row) return row;
    const names = await this.workflowNames();
    if (!names.includes(workflow)) {
      throw new ToolError(
        "WORKFLOW_NOT_FOUND",
        `There is no workflow ${quote(workflow)}. ${names.length ? `Workflows here: ${nameList(names)}.` : `${this.database} has no workflows yet.`} Call list_workflows to see them.`,
      );
    }
    const recent = await this.engine.listRuns({ workflow, limit: 8 });
    const keys = recent.runs.map((r) => quote(r.key));
    throw new ToolError(
      "RUN_NOT_FOUND",
      `There is no run ${quote(`${workflow}/${key}`, 160)} (keys are case-sensitive). ${keys.length ? `Recent keys of ${quote(workflow)}: ${keys.join(", ")}${recent.nextCursor ? ", ..." : ""}.` : `Workflow ${quote(workflow)} has no runs in ${this.database} yet.`} Find a run with list_runs (workflow ${quote(workflow)}, keyContains)${this.offers("start_run") ? ", or create one with start_run" : ""}.`,
    );
  }
}
