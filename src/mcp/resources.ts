// Resources: waymark://workflows, and each run with its history, state and entries, as whole JSON.
// Templates list recent runs and complete workflow names, keys and entry ids.

import { type McpServer, ResourceTemplate } from "@modelcontextprotocol/sdk/server/mcp.js";
import { ErrorCode, McpError, type ReadResourceResult } from "@modelcontextprotocol/sdk/types.js";
import { fitItems, MAX_ANSWER_CHARS } from "./budget.js";
import type { McpContext } from "./context.js";
import { quote } from "./format.js";
import { LIMITS } from "./limits.js";
import { findEntry } from "./tools/get-step.js";
import { AUDIT_URI } from "./tools/list-audit.js";
import { collectWorkflows } from "./tools/list-workflows.js";
import { parseRunUri, runUri, WORKFLOWS_URI } from "./uris.js";

/**
 * The audit resource: the newest writes that fit the answer budget, how many were left out, and the
 * list_audit call (with its cursor) that reads the older ones.
 */
async function auditResource(ctx: McpContext): Promise<Record<string, unknown>> {
  const [page, total] = await Promise.all([ctx.engine.audit.list({ limit: 200 }), ctx.engine.audit.count()]);
  const render = async (n: number) => {
    const entries = page.entries.slice(0, n);
    const leftOut = total - n;
    const olderCursor =
      leftOut === 0
        ? null
        : n < page.entries.length
          ? (await ctx.engine.audit.list({ limit: n })).nextCursor
          : page.nextCursor;
    const note = leftOut
      ? `${leftOut} older write${leftOut === 1 ? " is" : "s are"} left out to keep this under ${MAX_ANSWER_CHARS} characters: call list_audit with cursor ${quote(olderCursor ?? "")} for them (it filters by run, surface and time).`
      : undefined;
    return { total, shown: n, leftOut, ...(note ? { note } : {}), olderCursor, entries };
  };
  const size = (value: unknown) => JSON.stringify(value, null, 2).length;
  // Start from the rows that fit compactly, then drop rows until the indented JSON fits too.
  let n = fitItems(page.entries, MAX_ANSWER_CHARS).length;
  let value = await render(n);
  while (n > 1 && size(value) > MAX_ANSWER_CHARS) {
    n = Math.max(1, Math.min(n - 1, Math.floor((n * MAX_ANSWER_CHARS) / size(value))));
    value = await render(n);
  }
  return value;
}

function json(uri: string, value: unknown): ReadResourceResult {
  return { contents: [{ uri, mimeType: "application/json", text: JSON.stringify(value, null, 2) }] };
}

/** Reads any run resource address (the template variables are percent-encoded, so parse the URI whole). */
async function readRun(ctx: McpContext, uri: URL): Promise<ReadResourceResult> {
  const href = uri.toString();
  const addr = parseRunUri(href);
  if (!addr) {
    throw new McpError(
      ErrorCode.InvalidParams,
      `Not a run resource: ${quote(href, 200)}. Run resources are waymark://runs/{workflow}/{key} with /history, /state or /steps/{id} after it; names are percent-encoded.`,
    );
  }
  const row = await ctx.run(addr.workflow, addr.key).catch((err: Error) => {
    throw new McpError(ErrorCode.InvalidParams, err.message);
  });
  switch (addr.part) {
    case "run":
      return json(href, await ctx.engine.info(row.id));
    case "state":
      return json(href, (await ctx.engine.info(row.id)).state);
    case "history": {
      const entries = [];
      for (let after = 0; ; ) {
        const page = await ctx.engine.history(row.id, { after, limit: 10_000 });
        entries.push(...page);
        if (page.length < 10_000) break;
        after = page.at(-1)!.id;
      }
      return json(href, { workflow: row.workflow, key: row.key, status: row.status, entries });
    }
    case "step": {
      const entry = await findEntry(ctx.engine, row.id, addr.step!).catch((err: Error) => {
        throw new McpError(ErrorCode.InvalidParams, err.message);
      });
      return json(href, entry);
    }
  }
}

async function completeWorkflow(ctx: McpContext, value: string): Promise<string[]> {
  if (value.length > LIMITS.name) return [];
  return (await ctx.workflowNames()).filter((n) => n.startsWith(value));
}

async function completeKey(ctx: McpContext, value: string, workflow: string | undefined): Promise<string[]> {
  // Nothing is longer than its bound: a longer prefix or workflow completes to nothing, unsearched.
  if (value.length > LIMITS.key || (workflow?.length ?? 0) > LIMITS.completion) return [];
  const page = await ctx.engine.listRuns({
    ...(workflow ? { workflow: decodeSafe(workflow) } : {}),
    ...(value ? { keyContains: value } : {}),
    limit: 100,
  });
  return [...new Set(page.runs.map((r) => r.key).filter((k) => k.startsWith(value)))];
}

function decodeSafe(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

export function registerResources(mcp: McpServer, ctx: McpContext): void {
  mcp.registerResource(
    "workflows",
    WORKFLOWS_URI,
    {
      title: "Workflows",
      description: "Every workflow with its versions, queue schemas, actions and run counts by status.",
      mimeType: "application/json",
    },
    async (uri) => json(uri.toString(), { workflows: await collectWorkflows(ctx) }),
  );

  mcp.registerResource(
    "audit",
    AUDIT_URI,
    {
      title: "Audit of writes",
      description: `The newest writes made through MCP, the inspector and the CLI, as many as fit ${MAX_ANSWER_CHARS} characters (list_audit filters and pages them).`,
      mimeType: "application/json",
    },
    async (uri) => json(uri.toString(), await auditResource(ctx)),
  );

  const complete = {
    workflow: (value: string) => completeWorkflow(ctx, value),
    key: (value: string, context?: { arguments?: Record<string, string> }) =>
      completeKey(ctx, value, context?.arguments?.workflow),
  };
  const read = (uri: URL) => readRun(ctx, uri);

  mcp.registerResource(
    "run",
    new ResourceTemplate("waymark://runs/{workflow}/{key}", {
      list: async () => {
        const page = await ctx.engine.listRuns({ limit: 50 });
        return {
          resources: page.runs.map((r) => ({
            uri: runUri(r.workflow, r.key),
            name: `${r.workflow}/${r.key}`,
            description: `${r.status} run of ${r.workflow} v${r.version}`,
            mimeType: "application/json",
          })),
        };
      },
      complete,
    }),
    {
      title: "Run",
      description:
        "One run: status, input, state, output, error, what it waits on. Names are percent-encoded. Subscribe to be told of every step.",
      mimeType: "application/json",
    },
    read,
  );
  mcp.registerResource(
    "run-history",
    new ResourceTemplate("waymark://runs/{workflow}/{key}/history", { list: undefined, complete }),
    {
      title: "Run history",
      description: "Every history entry of a run, whole, in recorded order.",
      mimeType: "application/json",
    },
    read,
  );
  mcp.registerResource(
    "run-state",
    new ResourceTemplate("waymark://runs/{workflow}/{key}/state", { list: undefined, complete }),
    { title: "Run state", description: "A run's current state.", mimeType: "application/json" },
    read,
  );
  mcp.registerResource(
    "run-step",
    new ResourceTemplate("waymark://runs/{workflow}/{key}/steps/{id}", {
      list: undefined,
      complete: {
        ...complete,
        id: async (value, context) => {
          const w = context?.arguments?.workflow;
          const k = context?.arguments?.key;
          if (!w || !k || w.length + k.length + value.length > LIMITS.completion) return [];
          const row = await ctx.engine.findRun(decodeSafe(w), decodeSafe(k)).catch(() => undefined);
          if (!row) return [];
          const entries = await ctx.engine.history(row.id, { limit: 1000 });
          return entries.map((e) => String(e.id)).filter((id) => id.startsWith(value));
        },
      },
    }),
    {
      title: "History entry",
      description:
        "One history entry whole (every attempt, stack, state before and after), by id or percent-encoded path.",
      mimeType: "application/json",
    },
    read,
  );
}
