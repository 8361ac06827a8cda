// The inspector's runs filter by tags, on SQLite and PostgreSQL: GET /api/runs?tag=name=value (repeated:
// ANDed) pages through the tagged runs with its cursor, every row carries its tags, a malformed or oversized
// tag is a 400 naming the rule. (The list's Tags filter and tag links: ui/tags-view.test.ts.)

import { afterEach, describe, expect, test } from "vitest";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
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
