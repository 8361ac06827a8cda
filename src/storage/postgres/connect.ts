// Opening a PostgreSQL database: the URL (with Waymark's own `schema` and `pool` parameters), the pool,
// migrations, and errors that say what is wrong and what to do.

import { createHash } from "node:crypto";
import os from "node:os";
import pg from "pg";
import { InvalidInputError, StorageError } from "../../errors.js";
import { log } from "../../log.js";
import {
  BACKFILLS,
  createErrorIndex,
  ERROR_INDEX,
  errorIndexMissing,
  MIGRATIONS,
  SCHEMA_VERSION,
  VERSION_TABLE,
} from "./migrations.js";

/** Where a store lives, parsed from its URL. */
export interface PostgresTarget {
  /** The URL handed to node-postgres (Waymark's own parameters removed). */
  connectionString: string;
  /** The URL without its password, for messages and `Store.location`. */
  location: string;
  schema: string;
  /** The schema name quoted for SQL. */
  quoted: string;
  /** The LISTEN/NOTIFY channel of this schema, quoted. */
  channel: string;
  poolSize: number;
  host: string;
  port: string;
  user: string;
  database: string;
}

export { isPostgresUrl } from "./url.js";

const SCHEMA_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Parses `postgres://user:password@host:port/database?schema=name&pool=10` (other parameters go to node-postgres). */
export function parsePostgresUrl(url: string): PostgresTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidInputError(
      `Invalid PostgreSQL URL "${redact(url)}": write it as postgres://user:password@host:5432/database (add ?schema=name to keep Waymark's tables in their own schema).`,
    );
  }
  const schema = parsed.searchParams.get("schema") ?? "public";
  if (!SCHEMA_NAME.test(schema)) {
    throw new InvalidInputError(
      `Invalid schema ${JSON.stringify(schema)} in the PostgreSQL URL: use letters, digits and underscores (at most 63, not starting with a digit), e.g. ?schema=waymark.`,
    );
  }
  const poolParam = parsed.searchParams.get("pool");
  const poolSize = poolParam === null ? 10 : Number(poolParam);
  if (!Number.isInteger(poolSize) || poolSize < 2 || poolSize > 1000) {
    throw new InvalidInputError(
      `Invalid pool size ${JSON.stringify(poolParam)} in the PostgreSQL URL: ?pool= takes the most connections one process opens, a whole number from 2 to 1000 (default 10).`,
    );
  }
  parsed.searchParams.delete("schema");
  parsed.searchParams.delete("pool");
  const connectionString = parsed.toString();
  const shown = new URL(url);
  shown.password = "";
  const user = decodeURIComponent(parsed.username) || process.env.PGUSER || os.userInfo().username;
  const channelName = `waymark_${schema}`;
  const channel =
    channelName.length <= 63
      ? channelName
      : `waymark_${createHash("sha1").update(schema).digest("hex").slice(0, 32)}`;
  return {
    connectionString,
    location: shown.toString(),
    schema,
    quoted: `"${schema}"`,
    channel: `"${channel}"`,
    poolSize,
    host: parsed.hostname || "localhost",
    port: parsed.port || "5432",
    user,
    database: decodeURIComponent(parsed.pathname.slice(1)) || user,
  };
}

function redact(url: string): string {
  return url.replace(/(\/\/[^:/@]*:)[^@]*@/, "$1***@");
}

/** Type parsers: BIGINT (ids, times, counts) as JS numbers; everything else as node-postgres does. */
export const TYPES = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === 20) return (value: string) => Number(value);
    return pg.types.getTypeParser(oid, format as "text");
  },
};

/** Client settings shared by the pool and the LISTEN connection. */
export function clientConfig(target: PostgresTarget): pg.ClientConfig {
  return {
    connectionString: target.connectionString,
    types: TYPES,
    connectionTimeoutMillis: 10_000,
    fallback_application_name: "waymark",
  };
}

interface SchemaState {
  exists: boolean;
  version: number | null;
  tables: string[];
}

async function inspect(client: pg.PoolClient, t: PostgresTarget): Promise<SchemaState> {
  const { rows } = await client.query<{ relname: string }>(
    `SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = $1 AND c.relkind IN ('r', 'p', 'v', 'm', 'f') ORDER BY c.relname`,
    [t.schema],
  );
  const exists =
    rows.length > 0 ||
    (await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [t.schema])).rowCount! > 0;
  const tables = rows.map((r) => r.relname);
  if (!tables.includes(VERSION_TABLE)) return { exists, version: null, tables };
  const v = await client.query<{ version: number }>(`SELECT version FROM ${t.quoted}.${VERSION_TABLE}`);
  return { exists, version: v.rows[0]?.version ?? 0, tables: tables.filter((n) => n !== VERSION_TABLE) };
}

function checkSchema(t: PostgresTarget, s: SchemaState): void {
  if (s.version !== null && s.version > SCHEMA_VERSION) {
    throw new StorageError(
      "STORAGE_NEWER_SCHEMA",
      `Schema "${t.schema}" of ${t.location} was written by a newer Waymark (schema version ${s.version}; this one understands up to ${SCHEMA_VERSION}). Upgrade Waymark to open it; it was not changed.`,
      { location: t.location, version: s.version, supported: SCHEMA_VERSION },
    );
  }
  if (s.version === null && s.tables.length > 0) {
    throw new StorageError(
      "STORAGE_FOREIGN_DATABASE",
      `Schema "${t.schema}" of ${t.location} holds tables of something else (${s.tables.slice(0, 5).join(", ")}${s.tables.length > 5 ? ", ..." : ""}) and no Waymark schema. Give Waymark a schema of its own: add ?schema=waymark to the URL (it is created). Nothing was changed.`,
      { location: t.location, tables: s.tables },
    );
  }
}

/**
 * Creates the schema if missing and applies pending migrations, one process at a time (advisory lock). Then
 * whether the trigram index of error text (migration 15) is there: if not (pg_trgm could not be had), it is
 * tried again, and a warning says why the search in error text reads every failed run. Never fails for it.
 */
export async function migrate(pool: pg.Pool, t: PostgresTarget): Promise<{ errorIndex: boolean }> {
  await migrateSchema(pool, t);
  const client = await pool.connect();
  let broken = false;
  try {
    const has = async () =>
      (
        await client.query<{ ok: boolean }>("SELECT to_regclass($1) IS NOT NULL AS ok", [
          `${t.quoted}.${ERROR_INDEX}`,
        ])
      ).rows[0]!.ok;
    if (await has()) return { errorIndex: true };
    let why: string | null = null;
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`waymark:${t.schema}`]);
      if (!(await has())) why = await createErrorIndex(client, t.quoted);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      why = (err as Error).message;
    }
    if (why === null) return { errorIndex: true };
    log("warn", "waymark", errorIndexMissing(t.schema, why));
    return { errorIndex: false };
  } finally {
    client.release(broken);
  }
}

async function migrateSchema(pool: pg.Pool, t: PostgresTarget): Promise<void> {
  const client = await pool.connect();
  let broken = false;
  const onError = () => {
    broken = true;
  };
  client.on("error", onError);
  try {
    const first = await inspect(client, t);
    checkSchema(t, first);
    if (first.version === SCHEMA_VERSION) return;
    await client.query("BEGIN");
    try {
      await client.query("SELECT pg_advisory_xact_lock(hashtext($1))", [`waymark:${t.schema}`]);
      const now = await inspect(client, t);
      checkSchema(t, now);
      if (!now.exists) await client.query(`CREATE SCHEMA ${t.quoted}`);
      let version = now.version ?? 0;
      if (now.version === null) {
        await client.query(`CREATE TABLE ${t.quoted}.${VERSION_TABLE} (version INTEGER NOT NULL)`);
        await client.query(`INSERT INTO ${t.quoted}.${VERSION_TABLE} (version) VALUES (0)`);
      }
      for (; version < SCHEMA_VERSION; version++) {
        await client.query(MIGRATIONS[version]!(t.quoted));
        await BACKFILLS[version]?.(client, t.quoted);
      }
      await client.query(`UPDATE ${t.quoted}.${VERSION_TABLE} SET version = $1`, [SCHEMA_VERSION]);
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => {
        broken = true;
      });
      throw err;
    }
  } finally {
    client.removeListener("error", onError);
    client.release(broken);
  }
}
