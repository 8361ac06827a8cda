// The inspector's JSON API under /api, built on the engine's public API (the same calls the MCP tools make).
//
//   GET  /api/meta                                  read-only flag, mode, statuses, the server's clock
//   GET  /api/workflows                             workflows with run counts by status, and the totals
//   GET  /api/schedules                             every schedule: next due, paused or orphaned, last run
//   GET  /api/runs?workflow&status&key&error&tag=name=value...&after&before&cursor&limit    newest first, a page at a time
//   GET  /api/runs/:workflow/:key                   the run, what it waits on (with message schemas), queues
//   GET  /api/runs/:workflow/:key/history           every entry's timing, attempts and status (the first 10,000)
//   GET  /api/runs/:workflow/:key/entries/:id       one entry whole, with the state before and after it
//   GET  /api/runs/:workflow/:key/diagnosis         why a failed run failed (the diagnosis module)
//   POST /api/runs/:workflow/:key/messages          { queue, body, idempotencyKey? }
//   POST /api/runs/:workflow/:key/replay            { fromStep?, dryRun? }
//   POST /api/runs/:workflow/:key/cancel            {}
//   GET  /api/failures, POST /api/bulk/replay       failures by signature and "Replay all N" (bulk-api.ts)
//
// IMPORTANT: the POST routes write; they are refused (403) in read-only mode.

import type { IncomingMessage } from "node:http";
import type { Diagnosis } from "../diagnosis/types.js";
import type { WaymarkEngine } from "../engine/api.js";
import { outcomeOf } from "../engine/audit.js";
import type { AuditClient, AuditTarget } from "../engine/audit-types.js";
import type { ListRunsOptions } from "../engine/listing.js";
import { rollbackSummary } from "../engine/rollback-summary.js";
import { cut } from "../format.js";
import { RUN_STATUSES, type RunStatus, TERMINAL_STATUSES } from "../storage/store.js";
import { BulkApi } from "./bulk-api.js";
import { ApiError, readJson } from "./respond.js";
import {
  type CancelAnswer,
  clip,
  type DiagnosisAnswer,
  type EntryAnswer,
  entryBar,
  type HistoryAnswer,
  type MetaAnswer,
  type ReplayAnswer,
  type RunAnswer,
  type RunsAnswer,
  runRow,
  type SchedulesAnswer,
  type SendAnswer,
  type WorkflowsAnswer,
} from "./shapes.js";

/** How a failed run is explained; supplied by the diagnosis module when there is one. */
export type Diagnose = (engine: WaymarkEngine, runId: number) => Promise<Diagnosis>;

export interface ApiOptions {
  readOnly: boolean;
  maxBodyBytes: number;
  diagnose?: Diagnose | undefined;
}

/** The POST routes and the names the audit records them by (the MCP tools' names). */
const WRITE_ACTIONS = { messages: "send_message", replay: "replay_run", cancel: "cancel_run" } as const;

/** Largest value (JSON characters) sent whole in a run view; larger ones come clipped. */
const RUN_VALUE_MAX = 100_000;
/** Largest value sent whole in an entry's detail. */
const ENTRY_VALUE_MAX = 500_000;
/** Most entries a timeline gets (a bar each); beyond it the answer says `truncated`. */
const HISTORY_MAX = 10_000;

type Route = { body: unknown };

function str(value: unknown, what: string, max = 10_000): string {
  if (typeof value !== "string" || value.length > max)
    throw new ApiError(400, "INVALID_INPUT", `${what} must be a string of at most ${max} characters.`);
  return value;
}

/** A time filter: ISO text or milliseconds since the epoch. */
function time(value: string | null, what: string): number | undefined {
  if (value === null || value === "") return undefined;
  const ms = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  if (!Number.isFinite(ms))
    throw new ApiError(400, "INVALID_INPUT", `${what} must be an ISO time or milliseconds; got "${value}".`);
  return ms;
}

/** `tag=customer=c-9&tag=region=eu` as { customer: "c-9", region: "eu" } (the engine checks the limits). */
function tagParams(values: string[]): Record<string, string> | undefined {
  const tags: Record<string, string> = {};
  for (const v of values) {
    const at = v.indexOf("=");
    if (at <= 0)
      throw new ApiError(
        400,
        "INVALID_TAG",
        `tag takes name=value, e.g. tag=customer=c-9; got "${cut(v, 80)}".`,
      );
    tags[v.slice(0, at)] = v.slice(at + 1);
  }
  return values.length ? tags : undefined;
}

function segment(raw: string, what: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    throw new ApiError(400, "INVALID_INPUT", `The ${what} in the path is not valid URL encoding.`);
  }
}

export class InspectorApi {
  private readonly bulk: BulkApi;

  constructor(
    private readonly engine: WaymarkEngine,
    private readonly options: ApiOptions,
  ) {
    this.bulk = new BulkApi(engine, options);
  }

  /** Answers one /api request (the path without the "/api" prefix, split on "/"). */
  async handle(req: IncomingMessage, url: URL, parts: string[], client: AuditClient = {}): Promise<Route> {
    const method = req.method ?? "GET";
    const [head, ...rest] = parts;
    const get = method === "GET" || method === "HEAD";
    if (head === "meta" && rest.length === 0 && get) return { body: this.meta() };
    if (head === "workflows" && rest.length === 0 && get) return { body: await this.workflows() };
    if (head === "runs" && rest.length === 0 && get) return { body: await this.runs(url) };
    if (head === "schedules" && rest.length === 0 && get) return { body: await this.schedules() };
    if (head === "failures" && rest.length === 0 && get) return { body: await this.bulk.failures(url) };
    if (head === "bulk" && rest.length === 1 && rest[0] === "replay") {
      if (method !== "POST") throw methodNotAllowed(method);
      return { body: await this.bulk.replay(req, client) };
    }
    if (head === "runs" && rest.length >= 2) {
      const workflow = segment(rest[0]!, "workflow");
      const key = segment(rest[1]!, "key");
      const [sub, id, ...extra] = rest.slice(2);
      if (get && sub === undefined) return { body: await this.run(workflow, key) };
      if (get && sub === "history" && id === undefined) return { body: await this.history(workflow, key) };
      if (get && sub === "entries" && id !== undefined && extra.length === 0)
        return { body: await this.entry(workflow, key, id) };
      if (get && sub === "diagnosis" && id === undefined)
        return { body: await this.diagnosis(workflow, key) };
      if (
        method === "POST" &&
        id === undefined &&
        (sub === "messages" || sub === "replay" || sub === "cancel")
      ) {
        return { body: await this.write(req, client, workflow, key, sub) };
      }
      if (
        sub === undefined ||
        ["history", "entries", "diagnosis", "messages", "replay", "cancel"].includes(sub)
      )
        throw methodNotAllowed(method);
    }
    throw new ApiError(
      404,
      "NOT_FOUND",
      `No API route ${method} ${url.pathname}. Routes: /api/meta, /api/workflows, /api/failures, /api/bulk/replay, /api/runs, /api/runs/{workflow}/{key}[/history|/entries/{id}|/diagnosis|/messages|/replay|/cancel], /api/events.`,
    );
  }

  /** One of the POST routes, recorded in the audit with its outcome (refusals too: read-only, bad body, no run). */
  private async write(
    req: IncomingMessage,
    client: AuditClient,
    workflow: string,
    key: string,
    sub: "messages" | "replay" | "cancel",
  ): Promise<unknown> {
    const action = WRITE_ACTIONS[sub];
    const target: AuditTarget = { workflow, key };
    let args: unknown = null;
    try {
      if (this.options.readOnly) {
        throw new ApiError(
          403,
          "READ_ONLY",
          "This server is read-only (--read-only): it shows runs but does not send messages, replay or cancel.",
        );
      }
      args = await readJson(req, this.options.maxBodyBytes);
      if (typeof args !== "object" || args === null || Array.isArray(args))
        throw new ApiError(400, "INVALID_INPUT", "The request body must be a JSON object.");
      const body = args as Record<string, unknown>;
      const runId = (await this.engine.findRun(workflow, key))?.id;
      if (runId !== undefined) target.runId = runId;
      const answer =
        sub === "messages"
          ? await this.send(workflow, key, body)
          : sub === "replay"
            ? await this.replay(workflow, key, body)
            : await this.cancel(workflow, key);
      await this.engine.audit.record(
        { surface: "inspector", client, action, run: target, args },
        { ok: true },
      );
      return answer;
    } catch (err) {
      await this.engine.audit.record(
        { surface: "inspector", client, action, run: target, args },
        outcomeOf(err),
      );
      throw err;
    }
  }

  private meta(): MetaAnswer {
    return {
      readOnly: this.options.readOnly,
      /** True when this process has no workflow code: another process executes the runs. */
      attached: this.engine.registered().length === 0,
      diagnosis: this.options.diagnose !== undefined,
      statuses: RUN_STATUSES,
      serverNow: this.engine.clock.now(),
    };
  }

  private async schedules(): Promise<SchedulesAnswer> {
    return { schedules: await this.engine.schedules.list() };
  }

  private async workflows(): Promise<WorkflowsAnswer> {
    const workflows = await this.engine.listWorkflows();
    const totals: Record<string, number> = {};
    for (const w of workflows) {
      for (const [status, n] of Object.entries(w.runs)) totals[status] = (totals[status] ?? 0) + n;
    }
    return {
      workflows: workflows.map((w) => ({
        name: w.name,
        versions: w.versions,
        latest: w.latest,
        description: w.description ?? null,
        queues: w.queues,
        runs: w.runs,
      })),
      totals,
    };
  }

  private async runs(url: URL): Promise<RunsAnswer> {
    const q = url.searchParams;
    const options: ListRunsOptions = {};
    const workflow = q.get("workflow");
    if (workflow) options.workflow = workflow;
    const statuses = q
      .getAll("status")
      .flatMap((s) => s.split(","))
      .filter(Boolean);
    if (statuses.length) options.status = statuses as RunStatus[];
    const key = q.get("key");
    if (key) options.keyContains = key;
    const error = q.get("error");
    if (error) options.errorContains = error;
    const tags = tagParams(q.getAll("tag"));
    if (tags) options.tags = tags;
    const after = time(q.get("after"), "after");
    const before = time(q.get("before"), "before");
    if (after !== undefined) options.createdAfter = after;
    if (before !== undefined) options.createdBefore = before;
    const cursor = q.get("cursor");
    if (cursor) options.cursor = cursor;
    const limit = Number(q.get("limit") ?? "25");
    options.limit = Number.isInteger(limit) && limit > 0 ? Math.min(limit, 200) : 25;
    const page = await this.engine.listRuns(options);
    return { runs: page.runs.map(runRow), nextCursor: page.nextCursor, serverNow: this.engine.clock.now() };
  }

  private async runId(workflow: string, key: string): Promise<number> {
    return (await this.engine.get(workflow, key)).id;
  }

  /** JSON Schemas of the queues of a workflow version, as the process that runs it published them. */
  private async queueSchemas(workflow: string, version: number): Promise<Record<string, unknown>> {
    const id = `${workflow}@${version}`;
    const meta = (await this.engine.published()).get(id) ?? (await this.engine.published(true)).get(id);
    return meta?.queues ?? {};
  }

  /** GET /api/runs/:workflow/:key; also the MCP Apps run view's data (with smaller values). */
  async run(workflow: string, key: string, valueMax = RUN_VALUE_MAX): Promise<RunAnswer> {
    const info = await this.engine.info(await this.runId(workflow, key));
    const schemas = await this.queueSchemas(info.workflow, info.version);
    const now = this.engine.clock.now();
    const terminal = TERMINAL_STATUSES.includes(info.status);
    const writable = !this.options.readOnly;
    const family = await this.engine.family(info.id);
    const address = (r: { workflow: string; key: string; status: string }) => ({
      workflow: r.workflow,
      key: r.key,
      status: r.status,
    });
    return {
      parent: family.parent ? address(family.parent) : null,
      children: family.children
        .slice(0, 100)
        .map((c) => ({ ...address(c), entry: c.entry, detached: c.detached })),
      run: {
        ...runRow(info),
        error: info.error,
        input: clip(info.input, valueMax),
        state: clip(info.state, valueMax),
        output: clip(info.output, valueMax),
        wakeAt: info.wakeAt,
        executing: info.owner !== null && (info.leaseUntil ?? 0) > now,
      },
      waiting: (info.waiting ?? []).map((w) => ({
        ...w,
        ...(w.queue && schemas[w.queue] !== undefined ? { messageSchema: schemas[w.queue] } : {}),
      })),
      queues: Object.entries(schemas).map(([name, schema]) => ({ name, schema })),
      concurrency: await this.engine.concurrency(info.id),
      can: {
        send: writable && !terminal,
        cancel: writable && !terminal,
        replay: writable,
      },
      writes: {
        count: await this.engine.audit.count({ workflow, key }),
        entries: (await this.engine.audit.list({ workflow, key, limit: 20 })).entries,
      },
      rollback: rollbackSummary(
        await this.engine.history(info.id, { limit: HISTORY_MAX }),
        info.status,
        info.error,
      ),
      serverNow: now,
    };
  }

  /** GET /api/runs/:workflow/:key/history. */
  async history(workflow: string, key: string): Promise<HistoryAnswer> {
    const id = await this.runId(workflow, key);
    const entries = await this.engine.history(id, { limit: HISTORY_MAX });
    const last = entries.at(-1);
    const truncated =
      entries.length === HISTORY_MAX && last !== undefined
        ? (await this.engine.history(id, { after: last.id, limit: 1 })).length > 0
        : false;
    return {
      entries: entries.map(entryBar),
      truncated,
      serverNow: this.engine.clock.now(),
    };
  }

  /** GET /api/runs/:workflow/:key/entries/:id; also the MCP Apps run view's chosen entry. */
  async entry(workflow: string, key: string, ref: string, valueMax = ENTRY_VALUE_MAX): Promise<EntryAnswer> {
    const id = await this.runId(workflow, key);
    if (!/^\d+$/.test(ref)) throw new ApiError(400, "INVALID_INPUT", `Entry ids are numbers; got "${ref}".`);
    const e = await this.engine.entry(id, Number(ref));
    return {
      entry: {
        ...e,
        input: clip(e.input, valueMax),
        output: clip(e.output, valueMax),
        stateBefore: clip(e.stateBefore, valueMax),
        stateAfter: clip(e.stateAfter, valueMax),
        stateChange: clip(e.stateChange, valueMax),
        detail: clip(e.detail, valueMax),
      },
    };
  }

  private async diagnosis(workflow: string, key: string): Promise<DiagnosisAnswer> {
    const id = await this.runId(workflow, key);
    const diagnose = this.options.diagnose;
    if (!diagnose) {
      throw new ApiError(
        404,
        "DIAGNOSIS_UNAVAILABLE",
        "This build has no diagnosis module yet (src/diagnosis), so there is no diagnosis to show. Read the failed step's error and attempts in the timeline.",
      );
    }
    return { diagnosis: await diagnose(this.engine, id) };
  }

  private async send(workflow: string, key: string, args: Record<string, unknown>): Promise<SendAnswer> {
    const id = await this.runId(workflow, key);
    const queue = str(args.queue, "queue", 200);
    if (!("body" in args)) throw new ApiError(400, "INVALID_INPUT", "Give the message as body.");
    const idem =
      args.idempotencyKey === undefined ? undefined : str(args.idempotencyKey, "idempotencyKey", 256);
    const sent = await this.engine.send(id, queue, args.body, idem ? { idempotencyKey: idem } : {});
    return { ...sent, queue };
  }

  private async replay(workflow: string, key: string, args: Record<string, unknown>): Promise<ReplayAnswer> {
    const id = await this.runId(workflow, key);
    const from = args.fromStep;
    if (from !== undefined && from !== null && typeof from !== "string" && !Number.isInteger(from))
      throw new ApiError(400, "INVALID_INPUT", "fromStep is an entry path or id.");
    const result = await this.engine.replay(id, {
      ...(from !== undefined && from !== null ? { fromStep: from as string | number } : {}),
      dryRun: args.dryRun === true,
      requestedBy: "inspector",
    });
    if ("requested" in result) return { requested: true, message: result.message };
    return { ...result, restoreState: clip(result.restoreState, RUN_VALUE_MAX) };
  }

  private async cancel(workflow: string, key: string): Promise<CancelAnswer> {
    const result = await this.engine.cancel(await this.runId(workflow, key), { by: "the run inspector" });
    return { status: result };
  }
}

function methodNotAllowed(method: string): ApiError {
  return new ApiError(405, "METHOD_NOT_ALLOWED", `Method ${method} is not allowed on this route.`);
}
