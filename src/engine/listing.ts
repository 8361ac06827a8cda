// Listing runs and workflows: filters, keyset cursors, counts by status and version.

import { InvalidInputError } from "../errors.js";
import { RUN_STATUSES, type RunQuery, type RunStatus, type Store } from "../storage/store.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import type { Definitions } from "./definitions.js";
import { checkOptions } from "./query-input.js";
import { checkTags, tagsByRun } from "./tags.js";
import { type RunInfo, toRunInfo } from "./views.js";

export interface ListRunsOptions {
  workflow?: string;
  status?: RunStatus | RunStatus[];
  key?: string;
  keyContains?: string;
  errorContains?: string;
  createdAfter?: number | Date;
  createdBefore?: number | Date;
  /** Only runs on this workflow version. */
  version?: number;
  /** Only failed or retrying runs with this failure signature (as list_failures reports it). */
  failureSignature?: string;
  /** Only runs holding every one of these tags with exactly these values (ANDed), read from their index. */
  tags?: Record<string, string>;
  limit?: number;
  /** Opaque cursor from a previous page. */
  cursor?: string;
}

/** A workflow as a process that runs it published it to the database. */
export interface PublishedWorkflow {
  name: string;
  version: number;
  description: string | null;
  /** Queue name to the JSON Schema of its messages. */
  queues: Record<string, unknown>;
  actions: string[];
}

/** A workflow with its versions and how many runs it has in each status (overall and per version). */
export interface WorkflowSummary {
  name: string;
  versions: number[];
  latest: number;
  description?: string;
  queues: string[];
  actions: string[];
  runs: Record<string, number>;
  runsByVersion: Record<string, Record<string, number>>;
}

export interface RunPage {
  runs: RunInfo[];
  /** Pass back to get the next page; null on the last page. */
  nextCursor: string | null;
}

export function toTime(value: number | Date | undefined): number | undefined {
  return value instanceof Date ? value.getTime() : value;
}

/** Runs newest first, filtered, a page at a time. */
export async function listRuns(store: Store, options: ListRunsOptions = {}): Promise<RunPage> {
  checkOptions(options, {
    workflow: "string",
    key: "string",
    keyContains: "string",
    errorContains: "string",
    failureSignature: "string",
    cursor: "string",
    limit: "number",
    version: "version",
    createdAfter: "time",
    createdBefore: "time",
  });
  const limit = Math.min(Math.max(Math.floor(options.limit ?? 50), 1), 1000);
  const statuses =
    options.status === undefined
      ? undefined
      : Array.isArray(options.status)
        ? options.status
        : [options.status];
  for (const s of statuses ?? []) {
    if (!RUN_STATUSES.includes(s)) {
      throw new InvalidInputError(
        `Unknown run status ${JSON.stringify(s)}; statuses are: ${RUN_STATUSES.join(", ")}.`,
      );
    }
  }
  const query: RunQuery = { limit: limit + 1 };
  if (options.workflow !== undefined) query.workflow = options.workflow;
  if (statuses) query.status = statuses;
  if (options.key !== undefined) query.key = options.key;
  if (options.keyContains) query.keyContains = options.keyContains;
  if (options.errorContains) query.errorContains = options.errorContains;
  if (options.version !== undefined) query.version = options.version;
  if (options.failureSignature !== undefined) query.failureSignature = options.failureSignature;
  if (options.tags !== undefined) {
    const tags = checkTags(options.tags, "option tags", true);
    if (Object.keys(tags).length) query.tags = tags;
  }
  const after = toTime(options.createdAfter);
  const before = toTime(options.createdBefore);
  if (after !== undefined) query.createdAfter = after;
  if (before !== undefined) query.createdBefore = before;
  if (options.cursor) {
    const [createdAt, id] = decodeCursor(options.cursor, 2);
    query.before = { createdAt: createdAt!, id: id! };
  }
  const rows = await store.listRuns(query);
  const page = rows.slice(0, limit);
  const last = page.at(-1);
  const tags = tagsByRun(await store.runTags(page.map((r) => r.id)));
  return {
    runs: page.map((r) => toRunInfo(r, tags.get(r.id))),
    nextCursor: rows.length > limit && last ? encodeCursor([last.createdAt, last.id]) : null,
  };
}

/** Workflows (registered here or published by other processes) with versions and run counts by status. */
export async function listWorkflows(
  store: Store,
  defs: Definitions,
  published: PublishedWorkflow[],
): Promise<WorkflowSummary[]> {
  const counts = await store.countRuns();
  const names = new Set<string>([
    ...defs.keys(),
    ...published.map((p) => p.name),
    ...counts.map((c) => c.workflow),
  ]);
  return [...names].sort().map((name) => {
    const versions = new Set<number>(defs.get(name)?.keys() ?? []);
    for (const p of published) if (p.name === name) versions.add(p.version);
    for (const c of counts) if (c.workflow === name) versions.add(c.version);
    const sorted = [...versions].sort((a, b) => a - b);
    const latest = sorted.at(-1) ?? 1;
    const def = defs.get(name)?.get(latest);
    const meta = published.find((p) => p.name === name && p.version === latest);
    const runs: Record<string, number> = {};
    const runsByVersion: Record<string, Record<string, number>> = {};
    for (const c of counts) {
      if (c.workflow !== name) continue;
      runs[c.status] = (runs[c.status] ?? 0) + c.count;
      const v = (runsByVersion[String(c.version)] ??= {});
      v[c.status] = (v[c.status] ?? 0) + c.count;
    }
    const description = def?.description ?? meta?.description ?? undefined;
    return {
      name,
      versions: sorted,
      latest,
      ...(description ? { description } : {}),
      queues: def ? Object.keys(def.queues) : Object.keys(meta?.queues ?? {}),
      actions: def ? Object.keys(def.actions as object) : (meta?.actions ?? []),
      runs,
      runsByVersion,
    };
  });
}
