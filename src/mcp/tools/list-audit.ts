// list_audit: the writes made to runs (and schedules) through MCP, the inspector and the CLI, newest first:
// who (client, session, user), what (tool and arguments, cut), to which run, and how it ended.

import { z } from "zod";
import type { AuditEntry, AuditListOptions } from "../../engine/audit-types.js";
import { AUDIT_SURFACES } from "../../storage/store.js";
import { fitAnswer, fitItems } from "../budget.js";
import { ToolError } from "../errors.js";
import { brief, quote } from "../format.js";
import { bounded, LIMITS } from "../limits.js";
import { defineTool, READ_ONLY } from "./tool.js";

/** The URI of the whole audit as a resource (its newest writes). */
export const AUDIT_URI = "waymark://audit";

function time(value: string | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms))
    throw new ToolError(
      "INVALID_INPUT",
      `${field} ${quote(value)} is not a time: use an ISO time such as 2025-01-31T12:00:00Z.`,
    );
  return ms;
}

/** Who made a write, in a few words: "claude-code 1.2 (session ab12)", "inspector login-3f…", "cli ann pid 42". */
export function whoLine(e: AuditEntry): string {
  const c = e.client;
  const parts = [
    c.name,
    c.version,
    c.user ? `user ${c.user}` : undefined,
    c.pid ? `pid ${c.pid}` : undefined,
  ];
  if (c.label) parts.push(c.label);
  if (c.session) parts.push(`session ${c.session.slice(0, 16)}`);
  return `${e.surface}${parts.some(Boolean) ? ` ${parts.filter(Boolean).join(" ")}` : ""}`;
}

/** One write on one line. */
export function auditLine(e: AuditEntry): string {
  const w = e.run?.workflow;
  const k = e.run?.key;
  const run = k ? ` ${w ?? "?"}/${k}` : w ? ` ${w}` : "";
  const outcome = e.outcome.ok ? "ok" : `refused ${e.outcome.code}: ${brief(e.outcome.message, 160)}`;
  return `#${e.id} ${e.at} ${e.action}${run} by ${whoLine(e)}: ${outcome}; args ${brief(e.args, 200)}${e.argsCut ? " (cut)" : ""}`;
}

const clientShape = z
  .object({
    name: z.string().optional().describe("The MCP client's name (initialize), the CLI verb, or the browser."),
    version: z.string().optional().describe("The MCP client's version."),
    session: z.string().optional().describe("The MCP session id (HTTP), or the inspector login's label."),
    label: z.string().optional().describe("The credential used: bearer token or login session."),
    user: z.string().optional().describe("The operating-system user (CLI)."),
    pid: z.number().optional().describe("The process id (CLI)."),
  })
  .describe("Who made the write.");

export const auditEntryShape = {
  id: z.number().describe("The write's id (grows with time)."),
  at: z.string().describe("When (ISO)."),
  surface: z.enum(AUDIT_SURFACES).describe("mcp, inspector or cli."),
  client: clientShape,
  action: z.string().describe("The tool (send_message, replay_run...) or its name on that surface."),
  run: z
    .object({
      workflow: z.string().nullable().describe("Workflow named."),
      key: z.string().nullable().describe("Run key named."),
      runId: z.number().nullable().describe("The run's id, when it existed."),
    })
    .nullable()
    .describe("The run the write targets, or null."),
  args: z.unknown().describe("The arguments (JSON); their beginning as text when cut."),
  argsCut: z.boolean().describe("True when the arguments were cut to the audit's bound."),
  outcome: z
    .object({
      ok: z.boolean().describe("True when the write was done."),
      code: z.string().optional().describe("The error code of a refused or failed write."),
      message: z.string().optional().describe("Its message."),
    })
    .describe("How the write ended."),
};

export const listAudit = defineTool({
  name: "list_audit",
  title: "List the audit of writes",
  description:
    "Lists the writes made through MCP, the run inspector and the CLI (send_message, start_run, cancel_run, replay_run, schedules...), newest first, refused ones included: when, which surface, which client (name and version, session; the CLI's user), the arguments (cut), the run, and the outcome. Filter by run (workflow and key, or runId), surface and time. Use it to answer 'who changed this run?' or 'what did the agents do today?'. The audit cannot be changed. Pass nextCursor back as cursor for older writes.",
  input: {
    workflow: bounded(LIMITS.name, "workflow").optional().describe("Only writes naming this workflow."),
    key: bounded(LIMITS.key, "key").optional().describe("Only writes naming this run key (with workflow)."),
    runId: z.number().int().min(1).optional().describe("Only writes recorded against this run id."),
    surface: z.enum(AUDIT_SURFACES).optional().describe("Only writes made through mcp, inspector or cli."),
    since: bounded(LIMITS.time, "since").optional().describe("Only writes at or after this ISO time."),
    until: bounded(LIMITS.time, "until").optional().describe("Only writes before this ISO time."),
    limit: z.number().int().min(1).max(100).optional().describe("Writes per page, 1-100 (default 25)."),
    cursor: bounded(LIMITS.cursor, "cursor")
      .optional()
      .describe("nextCursor of the previous page, unchanged; omit for the newest writes."),
  },
  output: {
    entries: z.array(z.object(auditEntryShape)).describe("Writes, newest first."),
    total: z.number().describe("How many writes match the filters (every page)."),
    nextCursor: z.string().nullable().describe("Pass as cursor for older writes; null on the last page."),
  },
  annotations: { ...READ_ONLY, title: "List the audit of writes" },
  write: false,
  async handler(args, ctx) {
    if (args.key !== undefined && args.workflow === undefined)
      throw new ToolError("INVALID_INPUT", "key needs workflow: pass both to name a run (or runId).");
    const since = time(args.since, "since");
    const until = time(args.until, "until");
    const filter: Omit<AuditListOptions, "cursor" | "limit"> = {
      ...(args.workflow !== undefined ? { workflow: args.workflow } : {}),
      ...(args.key !== undefined ? { key: args.key } : {}),
      ...(args.runId !== undefined ? { runId: args.runId } : {}),
      ...(args.surface !== undefined ? { surface: args.surface } : {}),
      ...(since !== undefined ? { since } : {}),
      ...(until !== undefined ? { until } : {}),
    };
    const limit = args.limit ?? 25;
    const cursor = args.cursor ? { cursor: args.cursor } : {};
    const [page, total] = await Promise.all([
      ctx.engine.audit.list({ ...filter, ...cursor, limit }),
      ctx.engine.audit.count(filter),
    ]);
    const entries = fitItems(page.entries, 12_000);
    let nextCursor = page.nextCursor;
    // The page ends early to keep the answer small: ask again for that many to get the right cursor.
    if (entries.length < page.entries.length)
      nextCursor = (await ctx.engine.audit.list({ ...filter, ...cursor, limit: entries.length })).nextCursor;
    return fitAnswer(() => ({
      text: entries.length
        ? `${total} write${total === 1 ? "" : "s"} match; ${entries.length} here, newest first${nextCursor ? " (older: pass nextCursor)" : ""}:\n${entries.map((e) => `- ${auditLine(e)}`).join("\n")}`
        : `No writes match in the audit of ${ctx.database}.`,
      structured: { entries, total, nextCursor },
    }));
  },
});
