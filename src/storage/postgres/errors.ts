// Errors that reach users, for PostgreSQL: what went wrong, and what to do about it.

import {
  type ErrorCode,
  InvalidInputError,
  LeaseLostError,
  StorageError,
  WaymarkError,
} from "../../errors.js";
import type { PostgresTarget } from "./connect.js";

/** The connection died (server restart, network, terminated backend): nothing of an open transaction stays. */
export function connectionLost(err: unknown): boolean {
  const code = (err as { code?: string }).code ?? "";
  const message = err instanceof Error ? err.message : "";
  return (
    /^(ECONNRESET|EPIPE|57P01|57P02|08000|08003|08006)$/.test(code) ||
    /Connection terminated|connection error/i.test(message)
  );
}

/** Turns a failure to open (connect, log in, create the schema, migrate) into a message with the fix. */
export function describeOpenError(t: PostgresTarget, err: unknown): Error {
  if (err instanceof StorageError || err instanceof InvalidInputError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string }).code ?? "";
  const at = `${t.host}:${t.port}`;
  const details = { location: t.location };
  const make = (c: ErrorCode, text: string) => new StorageError(c, text, details, { cause: err });
  if (code === "ECONNREFUSED")
    return make(
      "STORAGE_CANNOT_CONNECT",
      `Cannot connect to PostgreSQL at ${at}: nothing accepts connections there. Start PostgreSQL, or fix the host and port in the URL (${t.location}).`,
    );
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return make(
      "STORAGE_CANNOT_CONNECT",
      `Cannot connect to PostgreSQL: the host "${t.host}" is unknown. Fix the host in the URL (${t.location}).`,
    );
  if (code === "ETIMEDOUT" || /timeout/i.test(message))
    return make(
      "STORAGE_CANNOT_CONNECT",
      `PostgreSQL at ${at} did not answer within 10 seconds. Check that the server is up and that no firewall blocks port ${t.port}.`,
    );
  if (code === "28P01" || code === "28000")
    return make(
      "STORAGE_AUTH_FAILED",
      `PostgreSQL at ${at} refused user "${t.user}" (${message}). Check the user and password in the URL (postgres://user:password@${at}/${t.database}), or the server's pg_hba.conf.`,
    );
  if (code === "3D000")
    return make(
      "STORAGE_DATABASE_MISSING",
      `PostgreSQL at ${at} has no database "${t.database}". Create it (createdb ${t.database}, or CREATE DATABASE "${t.database}"), or name an existing database in the URL.`,
    );
  if (code === "42501")
    return make(
      "STORAGE_PERMISSION_DENIED",
      `User "${t.user}" may not create Waymark's tables in schema "${t.schema}" of database "${t.database}" (${message}). Grant it (GRANT CREATE ON DATABASE "${t.database}" TO "${t.user}", or GRANT ALL ON SCHEMA "${t.schema}" TO "${t.user}"), or choose a schema it owns with ?schema=name.`,
    );
  if (code === "53300")
    return make(
      "STORAGE_TOO_MANY_CONNECTIONS",
      `PostgreSQL at ${at} has no connection slots left (${message}). Close other clients, raise max_connections, or give each Waymark process fewer connections with ?pool=N in the URL.`,
    );
  if (code === "57P03")
    return make(
      "STORAGE_CANNOT_CONNECT",
      `PostgreSQL at ${at} is starting up or shutting down (${message}). Try again in a moment.`,
    );
  if (/SSL/i.test(message))
    return make(
      "STORAGE_CANNOT_CONNECT",
      `Cannot connect to PostgreSQL at ${at}: ${message}. Match the server's SSL setting with ?sslmode=require or ?sslmode=disable in the URL.`,
    );
  return make("STORAGE_OPEN_FAILED", `Cannot open PostgreSQL database ${t.location}: ${message}`);
}

/** Turns a driver error met while running into a StorageError that says what happened and what to do. */
export function describeRuntimeError(err: unknown, t: PostgresTarget, closed: boolean): unknown {
  if (err instanceof WaymarkError || err instanceof LeaseLostError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const code = (err as { code?: string }).code ?? "";
  const where = `PostgreSQL at ${t.host}:${t.port}`;
  const details = { location: t.location };
  const make = (c: ErrorCode, text: string) => new StorageError(c, text, details, { cause: err });
  if (closed) return make("STORAGE_CLOSED", `The store for ${t.location} was closed.`);
  if (
    /^(ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|57P01|57P02|57P03|08\w\w\w)$/.test(code) ||
    /Connection terminated|timeout/i.test(message)
  ) {
    return make(
      "STORAGE_UNAVAILABLE",
      `Lost the connection to ${where} (${message}). Waymark retries and reloads the runs from the database; check that the server is up.`,
    );
  }
  if (code === "40P01" || code === "40001" || code === "55P03")
    return make(
      "STORAGE_BUSY",
      `${where} kept refusing a write for conflicts (${message}); Waymark retries.`,
    );
  if (code === "53100")
    return make(
      "STORAGE_FULL",
      `The disk of ${where} is full (${message}); nothing was written. Free space; Waymark retries and the runs resume.`,
    );
  if (code === "25006")
    return make(
      "STORAGE_READONLY",
      `${where} accepts no writes (${message}): it is a standby or in read-only mode. Point the URL at the primary.`,
    );
  if (code === "53300")
    return make(
      "STORAGE_TOO_MANY_CONNECTIONS",
      `${where} has no connection slots left (${message}). Raise max_connections or lower ?pool=N; Waymark retries.`,
    );
  if (code === "42P01")
    return make(
      "STORAGE_SCHEMA_MISSING",
      `Waymark's tables in schema "${t.schema}" of ${t.location} are gone (${message}). Was the schema dropped? Restart the process to recreate it empty, or restore it.`,
    );
  return make("STORAGE_FAILED", `PostgreSQL (${t.location}) failed: ${message}`);
}
