// What engine.audit takes and answers (a write to record, an entry as listed, the interface), apart from
// the recorder so the public interface names them without importing it.

import type { AuditSurface } from "../storage/store.js";

export type { AuditSurface } from "../storage/store.js";

/** Who made a write: only the fields its surface knows are set. */
export interface AuditClient {
  /** The MCP client's name and version, from its initialize request. */
  name?: string;
  version?: string;
  /** The MCP session id (HTTP), or the inspector's login session label. */
  session?: string;
  /** A label for the credential used (a named token), when there is one. */
  label?: string;
  /** The operating-system user and process id (the CLI). */
  user?: string;
  pid?: number;
}

/** The run a write targets, as far as it is known (a refused write may name a run that does not exist). */
export interface AuditTarget {
  workflow?: string;
  key?: string;
  runId?: number;
}

/** A write to record. */
export interface AuditWrite {
  surface: AuditSurface;
  client: AuditClient;
  /** The tool (send_message...), or the inspector's / CLI's name for it (the same names where they match). */
  action: string;
  run?: AuditTarget | null;
  /** The arguments as given; stored as JSON cut to AUDIT_ARGS_MAX characters. */
  args: unknown;
}

/** How a write ended: done, or refused / failed with its error code and message. */
export type AuditOutcome = { ok: true } | { ok: false; code: string; message: string };

/** One recorded write as engine.audit.list() answers it. */
export interface AuditEntry {
  id: number;
  /** ISO time (the engine's clock). */
  at: string;
  surface: AuditSurface;
  client: AuditClient;
  action: string;
  run: { workflow: string | null; key: string | null; runId: number | null } | null;
  /** The arguments (JSON); a string holding their beginning when they were cut (`argsCut`). */
  args: unknown;
  argsCut: boolean;
  outcome: AuditOutcome;
}

/** Which writes engine.audit.list() answers, newest first. */
export interface AuditListOptions {
  /** The run's id: writes recorded against it. */
  runId?: number;
  /** Writes naming this workflow (and key): found even when they were refused and no run existed. */
  workflow?: string;
  key?: string;
  surface?: AuditSurface;
  /** At or after this time (ms). */
  since?: number;
  /** Before this time (ms). */
  until?: number;
  /** nextCursor of the previous page. */
  cursor?: string;
  /** Entries per page (default 25, at most 200). */
  limit?: number;
}

export interface AuditPage {
  entries: AuditEntry[];
  nextCursor: string | null;
}

/** engine.audit: record writes and read them. IMPORTANT: append-only; nothing here changes or removes one. */
export interface AuditControl {
  /** Records one write and how it ended; never throws (a store that cannot write is logged to stderr). */
  record(write: AuditWrite, outcome: AuditOutcome): Promise<AuditEntry | null>;
  /** Runs `fn` and records the write with its outcome (its error's code and message when it throws, rethrown). */
  around<T>(write: AuditWrite, fn: () => Promise<T>): Promise<T>;
  list(options?: AuditListOptions): Promise<AuditPage>;
  /** How many writes match (the filters of list, without paging). */
  count(options?: Omit<AuditListOptions, "cursor" | "limit">): Promise<number>;
}
