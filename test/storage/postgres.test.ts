// What only the PostgreSQL store has: URLs and schemas, errors that say what to do, concurrent opens and
// writers, and the LISTEN connection surviving a lost connection.

import { describe, expect, it } from "vitest";
import { InvalidInputError, StorageError } from "../../src/errors.js";
import { openStore } from "../../src/storage/open.js";
import { parsePostgresUrl } from "../../src/storage/postgres/connect.js";
import { SCHEMA_VERSION } from "../../src/storage/postgres/migrations.js";
import { openPostgresStore, type PostgresStore } from "../../src/storage/postgres/postgres-store.js";
import type { RunRow } from "../../src/storage/store.js";
import { onCleanup, until } from "../helpers.js";
import { PG_URL, pgUrl, sql, tempSchema } from "../postgres/pg.js";
import { batch } from "./backends.js";
import { createRun, send, T0 } from "./fixtures.js";

async function open(url: string): Promise<PostgresStore> {
  const store = await openPostgresStore(url);
  onCleanup(() => store.close());
  return store;
}

function failure(p: Promise<unknown>): Promise<Error & { code?: string }> {
  return p.then(
    () => {
      throw new Error("expected a failure");
    },
    (e: Error & { code?: string }) => e,
  );
}

describe("PostgreSQL URLs", () => {
  it("takes the schema and pool size from the URL and hides the password", () => {
    const t = parsePostgresUrl(
      "postgres://ann:s3cret@db.example:6543/app?schema=jobs&pool=4&sslmode=require",
    );
    expect(t).toMatchObject({
      schema: "jobs",
      poolSize: 4,
      host: "db.example",
      port: "6543",
      user: "ann",
      database: "app",
    });
    expect(t.location).toBe("postgres://ann@db.example:6543/app?schema=jobs&pool=4&sslmode=require");
    expect(t.connectionString).toBe("postgres://ann:s3cret@db.example:6543/app?sslmode=require");
    expect(parsePostgresUrl("postgresql://h/db").schema).toBe("public");
  });

  it("refuses a bad schema name or pool size with the fix", () => {
    expect(() => parsePostgresUrl("postgres://h/db?schema=my-app")).toThrow(InvalidInputError);
    expect(() => parsePostgresUrl("postgres://h/db?schema=my-app")).toThrow(
      /letters, digits and underscores/,
    );
    expect(() => parsePostgresUrl("postgres://h/db?pool=1")).toThrow(/whole number from 2 to 1000/);
  });

  it("openStore routes postgres:// and postgresql:// URLs to the PostgreSQL store, creating the schema", async () => {
    const { schema, url } = await tempSchema();
    const store = await openStore(url.replace(/^postgres:/, "postgresql:"));
    onCleanup(() => store.close());
    expect(store.kind).toBe("postgres");
    expect(store.location).toContain(`schema=${schema}`);
    const [row] = await sql(`SELECT version FROM "${schema}".waymark_schema`);
    expect(row.version).toBe(SCHEMA_VERSION);
  });
});

describe("PostgreSQL errors that reach users", () => {
  it("nothing listening at the address", async () => {
    const err = await failure(openPostgresStore("postgres://postgres@127.0.0.1:1/test?schema=x"));
    expect(err).toBeInstanceOf(StorageError);
    expect(err.code).toBe("STORAGE_CANNOT_CONNECT");
    expect(err.message).toMatch(
      /Cannot connect to PostgreSQL at 127\.0\.0\.1:1.*Start PostgreSQL, or fix the host and port/,
    );
  });

  it("an unknown user", async () => {
    const url = new URL(PG_URL);
    url.username = "no_such_user_wm";
    const err = await failure(openPostgresStore(url.toString()));
    expect(err.code).toBe("STORAGE_AUTH_FAILED");
    expect(err.message).toMatch(/refused user "no_such_user_wm".*Check the user and password in the URL/);
  });

  it("a missing database", async () => {
    const url = new URL(PG_URL);
    url.pathname = "/no_such_db_wm";
    const err = await failure(openPostgresStore(url.toString()));
    expect(err.code).toBe("STORAGE_DATABASE_MISSING");
    expect(err.message).toMatch(/has no database "no_such_db_wm". Create it \(createdb no_such_db_wm/);
  });

  it("a user that may not create the schema", async () => {
    const role = `wmt_role_${process.pid}`;
    await sql(`DROP ROLE IF EXISTS ${role}`);
    await sql(`CREATE ROLE ${role} LOGIN`);
    onCleanup(() => sql(`DROP ROLE IF EXISTS ${role}`).then(() => undefined));
    const url = new URL(pgUrl(`wmt_${process.pid}_denied`));
    url.username = role;
    const err = await failure(openPostgresStore(url.toString()));
    expect(err.code).toBe("STORAGE_PERMISSION_DENIED");
    expect(err.message).toContain(`GRANT CREATE ON DATABASE "test" TO "${role}"`);
  });
});

describe("PostgreSQL under several processes", () => {
  it("several stores opening a fresh schema at once migrate it once", async () => {
    const { schema, url } = await tempSchema();
    const stores = await Promise.all(Array.from({ length: 4 }, () => open(url)));
    expect(stores).toHaveLength(4);
    expect(await sql(`SELECT version FROM "${schema}".waymark_schema`)).toEqual([
      { version: SCHEMA_VERSION },
    ]);
  });

  it("concurrent batches sending to the same runs in opposite orders all land", async () => {
    const { url } = await tempSchema();
    const [a, b] = [await open(url), await open(url)];
    const runs: RunRow[] = [];
    for (let i = 0; i < 10; i++) runs.push(await createRun(a, `r${i}`));
    const sendAll = (store: PostgresStore, order: typeof runs, tag: string) =>
      Promise.all(
        Array.from({ length: 20 }, (_, round) =>
          store.commit(
            batch(T0, {
              messages: order.map((r) => ({
                runId: r.id,
                queue: "q",
                body: `"${tag}${round}"`,
                idempotencyKey: null,
                now: T0,
              })),
              requests: order.slice(0, 3).map((r) => ({ runId: r.id, kind: "cancel", args: "{}" })),
            }),
          ),
        ),
      );
    await Promise.all([sendAll(a, runs, "a"), sendAll(b, [...runs].reverse(), "b")]);
    expect(await a.maxMessageId()).toBeGreaterThanOrEqual(400);
    expect((await a.messagesSince(0, 1000)).length).toBe(400);
  });

  it("text PostgreSQL cannot hold (NUL) in a refused message's queue does not sink the batch", async () => {
    const { url } = await tempSchema();
    const store = await open(url);
    const run = await createRun(store, "nul");
    await store.commit(
      batch(T0, {
        rejections: [
          { runId: run.id, queue: "bad\u0000queue", body: '"x"', error: 'no queue "bad\u0000queue"', at: T0 },
        ],
        messages: [{ runId: run.id, queue: "q", body: "{}", idempotencyKey: "k\u0000", now: T0 }],
      }),
    );
    expect((await store.listRejections(run.id, 1))[0]!.queue).toBe("bad\uFFFDqueue");
    expect((await send(store, run.id, "q", {}, T0, "k\u0000")).duplicate).toBe(true);
  });

  it("survives its connections being killed: the pool reconnects, the LISTEN connection comes back", async () => {
    const { schema, url } = await tempSchema();
    const app = `wmt_app_${process.pid}`;
    const a = await open(pgUrl(schema, { application_name: app }));
    const b = await open(url);
    const run = await createRun(b, "x");
    let heard = 0;
    a.onChange(() => heard++);
    const counterMoves = async () => {
      const first = await a.changeCounter();
      return (await a.changeCounter()) !== first;
    };
    const killed = await sql(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1",
      [app],
    );
    expect(killed.length).toBeGreaterThanOrEqual(2); // at least the pool's connection and the LISTEN one
    // While LISTEN is down the counter moves on every look, so the engine's polling takes over.
    await until(async () => (await counterMoves()) || heard > 0, "the fallback");
    expect(await a.getRun(run.id)).toEqual(run);
    // Back to listening: notifications arrive again and the counter holds still between commits.
    await until(async () => {
      const before = heard;
      await send(b, run.id, "q", {});
      await new Promise((r) => setTimeout(r, 50));
      return heard > before && !(await counterMoves());
    }, "the LISTEN connection to come back");
  });
});
