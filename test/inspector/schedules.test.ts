// GET /api/schedules, on SQLite and PostgreSQL: each schedule's next due time, paused and orphaned flags, and
// the last run with its status, as the runs page's schedules panel draws them.

import { afterEach, describe, expect, test } from "vitest";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { Closer, tempDb } from "../mcp/helpers.js";
import { tempSchema } from "../postgres/pg.js";
import { request, serveInspector } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const report = workflow({ run: async () => "ok" });

describe.each([
  { name: "sqlite", database: async () => tempDb(closer) },
  { name: "postgres", database: async () => (await tempSchema()).url },
])("GET /api/schedules on $name", ({ database }) => {
  test("lists next due, paused, and the last run with its status", async () => {
    const clock = new FakeClock(Date.parse("2026-12-01T00:30:00Z"));
    const engine = await setup({
      use: { report },
      schedules: {
        hourly: { workflow: "report", every: "1h" },
        daily: { workflow: "report", cron: "0 6 * * *", timezone: "America/New_York" },
      },
    }).start({ database: await database(), clock });
    closer.add(() => engine.close());
    clock.set(Date.parse("2026-12-01T01:00:00Z"));
    await engine.tick();
    await (await engine.get("report", "hourly@2026-12-01T01:00:00.000Z")).result({ timeout: 5000 });
    await engine.schedules.pause("daily");
    const server = await serveInspector(closer, internals(engine));
    const answer = await request(`${server.base}/api/schedules`);
    expect(answer.status).toBe(200);
    expect(answer.json).toEqual({
      schedules: [
        {
          name: "daily",
          workflow: "report",
          spec: { cron: "0 6 * * *", timezone: "America/New_York", overlap: "skip", catchUp: "latest" },
          nextDue: null,
          paused: true,
          orphaned: false,
          last: null,
          lastRun: null,
        },
        {
          name: "hourly",
          workflow: "report",
          spec: { every: "1h", ms: 3_600_000, overlap: "skip", catchUp: "latest" },
          nextDue: "2026-12-01T02:00:00.000Z",
          paused: false,
          orphaned: false,
          last: { due: "2026-12-01T01:00:00.000Z", outcome: "started" },
          lastRun: { id: expect.any(Number), key: "hourly@2026-12-01T01:00:00.000Z", status: "completed" },
        },
      ],
    });
  });
});
