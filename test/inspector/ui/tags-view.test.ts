// The runs list's Tags filter and tags, drawn from data alone (Preact to HTML): the filter is sent as
// tag=name=value pairs, each run's tags are links that filter by them, hostile text stays text.

import { h } from "preact";
import { renderToString } from "preact-render-to-string";
import { expect, test } from "vitest";
import { runsQuery } from "../../../src/inspector/static/runs.js";
import { RunsView } from "../../../src/inspector/static/runs-view.js";

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
  // A comma inside a value stays in it; only ", name=" starts the next pair.
  expect(runsQuery({ ...filters, tags: "note=a,b, region=eu,x" }, "").getAll("tag")).toEqual([
    "note=a,b",
    "region=eu,x",
  ]);
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
      failures: [],
      readOnly: false,
      onReplayAll: () => {},
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
