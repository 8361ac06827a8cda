// compareRuns and diagnose's sibling evidence on PostgreSQL: the default other run found through the
// runs_completed index there too, and the same answer as on SQLite.

import { expect, it } from "vitest";
import { driveRun } from "../../fixtures/wait.js";
import type { RunComparison } from "../../src/diagnosis/compare-types.js";
import { FakeClock, setup } from "../../src/index.js";
import { closeLater } from "../helpers.js";
import { signup } from "../mcp/compare-workflows.js";
import { tempSchema } from "./pg.js";

it("compares with the latest completed run of the same version and names it in the diagnosis", async () => {
  const { url } = await tempSchema();
  const clock = new FakeClock();
  const engine = closeLater(await setup({ use: { signup } }).start({ database: url, clock }));
  const run = async (key: string, email: string | null, status: "completed" | "failed") => {
    const h = await engine.getOrCreate("signup", key, { customer: { name: "Ann", email }, plan: "team" });
    await driveRun(engine, clock, h, [status]);
    clock.advance(1000);
    return h;
  };
  await run("ok-1", "old@example.com", "completed");
  await run("ok-2", "ann@example.com", "completed");
  const bad = await run("bad", null, "failed");
  const c = (await engine.compareRuns(bad)) as RunComparison;
  expect(c.other).toMatchObject({ key: "ok-2", status: "completed" });
  expect(c.otherChosen).toBe("latest-completed");
  expect(c.input.changes).toEqual([{ pointer: "/customer/email", run: null, other: "ann@example.com" }]);
  expect(c.firstDifference).toMatchObject({ path: "send-welcome", reason: "status" });
  const given = (await engine.compareRuns(
    { workflow: "signup", key: "bad" },
    { workflow: "signup", key: "ok-1" },
  )) as RunComparison;
  expect(given).toMatchObject({ otherChosen: "given", other: { key: "ok-1" } });
  const d = await engine.diagnose(bad);
  expect(d.evidence.filter((e) => e.kind === "sibling").map((e) => e.fact)).toEqual([
    'The latest completed run of signup v1 (signup/ok-2) had input.customer.email set ("ann@example.com"); here it is null.',
  ]);
});
