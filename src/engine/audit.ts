// The audit of every write (MCP, inspector, CLI): one append per write, done or refused, read newest first.
//
// IMPORTANT: append-only. Nothing here (nor in the Store) changes or removes a row; the tables refuse
// UPDATE and DELETE themselves. Arguments are stored cut to AUDIT_ARGS_MAX characters of JSON.

import { log } from "../log.js";
import type { AuditRow, AuditSurface, Store } from "../storage/store.js";
import type {
  AuditClient,
  AuditControl,
  AuditEntry,
  AuditListOptions,
  AuditOutcome,
  AuditPage,
  AuditWrite,
} from "./audit-types.js";
import type { Clock } from "./clock.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { MAX_DEPTH, tooDeepAt } from "./depth.js";

/** Most characters of a write's arguments (JSON) kept in the audit. */
export const AUDIT_ARGS_MAX = 2000;
/** Most characters of one string value inside the arguments before it is cut (so the rest stays JSON). */
const STRING_MAX = 400;
/** Most characters of an error message kept. */
const MESSAGE_MAX = 1000;

/** The arguments as stored: JSON, long strings cut inside, the whole cut to `max`; `cut` says whether anything was. */
export function auditArgs(value: unknown, max = AUDIT_ARGS_MAX): { text: string; cut: boolean } {
  if (tooDeepAt(value, MAX_DEPTH) !== null)
    return { text: JSON.stringify(`(nested more than ${MAX_DEPTH} levels deep: not kept)`), cut: true };
  let cut = false;
  let text: string;
  try {
    text =
      JSON.stringify(value ?? null, (_k, v: unknown) => {
        if (typeof v === "string" && v.length > STRING_MAX) {
          cut = true;
          return `${v.slice(0, STRING_MAX)}… (${v.length} characters)`;
        }
        return typeof v === "bigint" ? String(v) : v;
      }) ?? "null";
  } catch (err) {
    return { text: JSON.stringify(`(not JSON: ${(err as Error).message})`), cut: true };
  }
  if (text.length > max) return { text: text.slice(0, max), cut: true };
  return { text, cut };
}

function entry(r: AuditRow): AuditEntry {
  let args: unknown = r.args;
  try {
    args = JSON.parse(r.args);
  } catch {
    // cut mid-value: shown as the text it begins with
  }
  let client: AuditClient = {};
  try {
    client = JSON.parse(r.client) as AuditClient;
  } catch {
    // written by this module as JSON; anything else reads as no client
  }
  return {
    id: r.id,
    at: new Date(r.at).toISOString(),
    surface: r.surface,
    client,
    action: r.action,
    run:
      r.workflow === null && r.runKey === null && r.runId === null
        ? null
        : { workflow: r.workflow, key: r.runKey, runId: r.runId },
    args,
    argsCut: r.argsCut,
    outcome: r.ok
      ? { ok: true }
      : { ok: false, code: r.errorCode ?? "UNEXPECTED", message: r.errorMessage ?? "" },
  };
}

/** The code and message an error carries (a Waymark error's code; "UNEXPECTED" for anything else). */
export function outcomeOf(err: unknown): AuditOutcome {
  const code = (err as { code?: unknown } | null)?.code;
  return {
    ok: false,
    code: typeof code === "string" && /^[A-Z_]+$/.test(code) ? code : "UNEXPECTED",
    message: err instanceof Error ? err.message : String(err),
  };
}

function filter(o: Omit<AuditListOptions, "cursor" | "limit">) {
  return {
    ...(o.runId !== undefined ? { runId: o.runId } : {}),
    ...(o.workflow !== undefined ? { workflow: o.workflow } : {}),
    ...(o.key !== undefined ? { runKey: o.key } : {}),
    ...(o.surface !== undefined ? { surface: o.surface as AuditSurface } : {}),
    ...(o.since !== undefined ? { since: o.since } : {}),
    ...(o.until !== undefined ? { until: o.until } : {}),
  };
}

/** engine.audit over a store and the engine's clock. */
export class Audit implements AuditControl {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async record(write: AuditWrite, outcome: AuditOutcome): Promise<AuditEntry | null> {
    const args = auditArgs(write.args);
    const row = {
      at: this.clock.now(),
      surface: write.surface,
      client: JSON.stringify(write.client),
      action: write.action,
      workflow: write.run?.workflow ?? null,
      runKey: write.run?.key ?? null,
      runId: write.run?.runId ?? null,
      args: args.text,
      argsCut: args.cut,
      ok: outcome.ok,
      errorCode: outcome.ok ? null : outcome.code,
      errorMessage: outcome.ok ? null : outcome.message.slice(0, MESSAGE_MAX),
    };
    try {
      const id = await this.store.appendAudit(row);
      return entry({ id, ...row });
    } catch (err) {
      log(
        "error",
        "waymark audit",
        `could not record ${write.surface} ${write.action} (${outcome.ok ? "ok" : outcome.code}): ${(err as Error).message}`,
      );
      return null;
    }
  }

  async around<T>(write: AuditWrite, fn: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await fn();
    } catch (err) {
      await this.record(write, outcomeOf(err));
      throw err;
    }
    await this.record(write, { ok: true });
    return result;
  }

  async list(options: AuditListOptions = {}): Promise<AuditPage> {
    const limit = Math.min(Math.max(Math.trunc(options.limit ?? 25), 1), 200);
    const beforeId = options.cursor ? decodeCursor(options.cursor, 1)[0] : undefined;
    const rows = await this.store.listAudit({
      ...filter(options),
      ...(beforeId !== undefined ? { beforeId } : {}),
      limit: limit + 1,
    });
    const page = rows.slice(0, limit);
    return {
      entries: page.map(entry),
      nextCursor: rows.length > limit && page.length ? encodeCursor([page.at(-1)!.id]) : null,
    };
  }

  count(options: Omit<AuditListOptions, "cursor" | "limit"> = {}): Promise<number> {
    return this.store.countAudit(filter(options));
  }
}
