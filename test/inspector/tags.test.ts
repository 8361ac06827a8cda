// The inspector's runs filter by tags, on SQLite and PostgreSQL: GET /api/runs?tag=name=value (repeated:
// ANDed) pages through the tagged runs with its cursor, every row carries its tags, a malformed or oversized
// tag is a 400 naming the rule; and the runs list draws the Tags filter and each run's tags as links.

import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { afterEach, describe, expect, test } from "vitest";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { runsQuery } from "../../src/inspector/static/runs.js";
import { RunsView } from "../../src/inspector/static/runs-view.js";
import { Closer, tempDb } from "../mcp/helpers.js";
import { tempSchema } from "../postgres/pg.js";
import { request, serveInspector } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const order = workflow({ run: async () => "ok" });

describe.each([
  { name: "sqlite", database: async () => tempDb(closer) },
  { name: "postgres", database: async () => (await tempSchema()).url },
])("GET /api/runs by tags on $name", ({ database }) => {
  test("filters by tags (ANDed), pages with the cursor, shows each run's tags, refuses a bad tag", async () => {
    const clock = new FakeClock();
    const engine = await setup({ use: { order } }).start({ database: await database(), clock });
    closer.add(() => engine.close());
    for (let i = 0; i < 5; i++) {
      await engine.getOrCreate("order", `o-${i}`, undefined, {
        tags: { customer: i % 2 ? "c-9" : "c-1", region: i < 3 ? "eu" : "us" },
      });
      clock.advance(1000);
    }
    const server = await serveInspector(closer, internals(engine));
    const keys: string[] = [];
    let cursor = "";
    do {
      const answer = await request(
        `${server.base}/api/runs?tag=customer%3Dc-1&tag=region%3Deu&limit=1${cursor ? `&cursor=${cursor}` : ""}`,
      );
      expect(answer.status).toBe(200);
      for (const r of answer.json.runs) {
        expect(r.tags).toEqual({ customer: "c-1", region: "eu" });
        keys.push(r.key);
      }
      cursor = answer.json.nextCursor ?? "";
    } while (cursor);
    expect(keys).toEqual(["o-2", "o-0"]);
    const bad = await request(`${server.base}/api/runs?tag=customer`);
    expect(bad.status).toBe(400);
    expect(bad.json.error.code).toBe("INVALID_TAG");
    const long = await request(`${server.base}/api/runs?tag=customer%3D${"v".repeat(300)}`);
    expect(long.status).toBe(400);
    expect(long.json.error.code).toBe("TAG_LIMIT_EXCEEDED");
    expect(long.json.error.message).toContain("has 300 characters; the limit is 256");
  });
});

test("the runs list has a Tags filter, sends it as tag=name=value pairs, and links each run's tags", () => {
  const filters = {
    workflow: "",
    status: "",
    key: "",
    error: "",
    tags: "customer=c-9, region=eu",
    after: "",
    before: "",
  };
  expect(runsQuery(filters, "").getAll("tag")).toEqual(["customer=c-9", "region=eu"]);
  const html = renderToString(
    h(RunsView, {
      filters,
      statuses: ["completed"],
      page: {
        runs: [
          {
            id: 1,
            workflow: "order",
            key: "o-1",
            status: "completed",
            version: 1,
            createdAt: 0,
            updatedAt: 0,
            finishedAt: 0,
            error: null,
            waiting: null,
            tags: { customer: "c-9", tier: "<gold>" },
          },
        ],
        nextCursor: null,
        serverNow: 0,
      },
      workflows: { workflows: [], totals: {} } as never,
      schedules: [],
      pageNumber: 1,
      href: (f) => `#/?tags=${encodeURIComponent(f.tags)}`,
      onFilter: () => {},
      onTurn: () => {},
    }),
  );
  expect(html).toContain('name="tags"');
  expect(html).toContain('value="customer=c-9, region=eu"');
  expect(html).toContain('href="#/?tags=customer%3Dc-9"');
  expect(html).toContain("tier=&lt;gold>");
});
