// PostgreSQL for tests: the server's URL, a fresh schema per test (dropped after it), raw SQL on it.
// The server is the machine's (127.0.0.1:5432, database `test`); WAYMARK_TEST_PG overrides the URL.

import pg from "pg";
import { onCleanup } from "../helpers.js";

export const PG_URL = process.env.WAYMARK_TEST_PG ?? "postgres://postgres@127.0.0.1:5432/test";

/** A store URL on a schema of its own. */
export function pgUrl(schema: string, params: Record<string, string> = {}): string {
  const url = new URL(PG_URL);
  url.searchParams.set("schema", schema);
  for (const [k, v] of Object.entries(params)) url.searchParams.set(k, v);
  return url.toString();
}

/** Runs SQL on the test database (outside any Waymark store). */
export async function sql<R extends pg.QueryResultRow = any>(
  text: string,
  values: unknown[] = [],
): Promise<R[]> {
  const client = new pg.Client({ connectionString: PG_URL });
  await client.connect();
  try {
    return (await client.query<R>(text, values)).rows;
  } finally {
    await client.end();
  }
}

let swept = false;

/** Drops schemas left behind by test processes that died before their cleanup ran. */
async function sweep(): Promise<void> {
  if (swept) return;
  swept = true;
  const rows = await sql<{ nspname: string }>(
    "SELECT nspname FROM pg_namespace WHERE nspname LIKE 'wmt\\_%'",
  );
  for (const { nspname } of rows) {
    const pid = Number(nspname.split("_")[1]);
    let alive = true;
    try {
      process.kill(pid, 0);
    } catch (err) {
      alive = (err as NodeJS.ErrnoException).code === "EPERM";
    }
    if (!alive) await sql(`DROP SCHEMA IF EXISTS "${nspname}" CASCADE`).catch(() => {});
  }
}

let counter = 0;

/** A fresh schema name for this test; the schema (created by the store on open) is dropped after the test. */
export async function tempSchema(): Promise<{ schema: string; url: string }> {
  await sweep();
  const schema = `wmt_${process.pid}_${Date.now().toString(36)}_${counter++}`;
  onCleanup(() => sql(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`).then(() => undefined));
  return { schema, url: pgUrl(schema) };
}
