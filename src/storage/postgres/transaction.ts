// One transaction on one pooled connection, retried when PostgreSQL rolled it back for a deadlock or a
// serialization failure, or when the connection was lost before COMMIT (then nothing was committed).

import type pg from "pg";
import { connectionLost } from "./errors.js";

/** A statement run inside the transaction, prepared once per connection by name. */
export type Query = <R extends pg.QueryResultRow = any>(
  name: string,
  text: string,
  values: unknown[],
) => Promise<pg.QueryResult<R>>;

const RETRYABLE = new Set(["40P01", "40001"]); // deadlock, serialization failure: the transaction rolled back

/** What a transaction needs from its store. */
export interface TransactionHost {
  pool: pg.Pool;
  /** Sent with COMMIT when `notify(result)` says so (other processes then look for changes). */
  notifySql: string;
  closed(): boolean;
  describe(err: unknown): unknown;
}

/** Runs `fn` in a transaction; `notify(result)` decides whether the commit sends NOTIFY. */
export async function inTransaction<T>(
  host: TransactionHost,
  fn: (q: Query) => Promise<T>,
  notify: (result: T) => boolean,
  begin = "BEGIN",
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    let client: pg.PoolClient;
    try {
      client = await host.pool.connect();
    } catch (err) {
      throw host.describe(err);
    }
    let broken = false;
    let committing = false;
    const onError = () => {
      broken = true; // the connection died while checked out; its query rejects too
    };
    client.on("error", onError);
    try {
      await client.query(begin);
      const q: Query = (name, text, values) => client.query({ name, text, values });
      const result = await fn(q);
      committing = true;
      await client.query(notify(result) ? `${host.notifySql}; COMMIT` : "COMMIT");
      return result;
    } catch (err) {
      if (!broken) {
        await client.query("ROLLBACK").catch(() => {
          broken = true;
        });
      }
      const code = (err as { code?: string }).code ?? "";
      // Rolled back for sure: a deadlock or serialization failure, or a connection lost before COMMIT.
      const again = RETRYABLE.has(code) || (connectionLost(err) && !committing && !host.closed());
      if (again && attempt < 8) {
        await new Promise((r) => setTimeout(r, Math.random() * 10 * attempt));
        continue;
      }
      throw host.describe(err);
    } finally {
      client.removeListener("error", onError);
      client.release(broken);
    }
  }
}
