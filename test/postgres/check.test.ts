// `waymark check` against PostgreSQL: the same findings, and the database left as it was.

import { expect, test } from "vitest";
import { check, waitingRun } from "../cli/run-check.js";
import { sql, tempSchema } from "./pg.js";

const dump = async (schema: string) =>
  JSON.stringify([
    await sql(`SELECT * FROM "${schema}".runs ORDER BY id`),
    await sql(`SELECT * FROM "${schema}".entries ORDER BY run_id, seq`),
    await sql(`SELECT * FROM "${schema}".messages ORDER BY id`),
  ]);

test("a waiting run whose step was renamed: exit 1 naming it; the code as deployed: exit 0; nothing written", async () => {
  const { schema, url } = await tempSchema();
  await waitingRun(url);
  const before = await dump(schema);
  const broken = await check(["--db", url, "--registry", "test/cli/payout-renamed.ts"]);
  expect(broken.code).toBe(1);
  expect(broken.stdout).toContain(
    'FAIL payout/p-1 (waiting, version 1): entry #1 of the root scope: history holds a step named "load-account"; the code asks for one named "load-customer"',
  );
  const fine = await check(["--db", url, "--registry", "test/cli/payout-v1.ts"]);
  expect(fine.code).toBe(0);
  expect(await dump(schema)).toBe(before);
}, 60_000);
