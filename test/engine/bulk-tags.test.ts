// Bulk selection by tags (SQLite and PostgreSQL): a dry run by tags pins only the runs holding every tag asked
// for (exact values, ANDed), with keys too, and refuses a malformed tag before pinning anything.

import { describe, expect, it } from "vitest";
import { FakeClock } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";
import { broken } from "./bulk-invoices.js";

const BACKENDS = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

/** inv-1..6 failed at "tax": customer c-1 (1-3) or c-2 (4-6), region eu (1, 2, 4) or us; inv-7 untagged. */
async function taggedFailures(database: string) {
  const engine = closeLater(await broken.start({ database, clock: new FakeClock() }));
  for (let n = 1; n <= 7; n++) {
    const tags: Record<string, string> =
      n === 7 ? {} : { customer: n <= 3 ? "c-1" : "c-2", region: [1, 2, 4].includes(n) ? "eu" : "us" };
    const run = await engine.getOrCreate("invoice", `inv-${n}`, { n, kind: "tax" }, { tags });
    await expect(run.result()).rejects.toThrow(/Tax API/);
  }
  return engine;
}

const pinned = (p: { samples: Array<{ run: string }> }) => p.samples.map((s) => s.run).sort();

describe.each(BACKENDS)("bulk selection by tags on $name", (backend) => {
  it("pins only the runs holding every tag asked for", async () => {
    const engine = await taggedFailures(await backend.database());
    const one = await engine.bulk.preview({ action: "replay", selector: { tags: { customer: "c-1" } } });
    expect(one).toMatchObject({ matched: 3, eligible: 3 });
    expect(pinned(one)).toEqual(["invoice/inv-1", "invoice/inv-2", "invoice/inv-3"]);

    const two = await engine.bulk.preview({
      action: "cancel",
      selector: { status: ["failed"], tags: { customer: "c-2", region: "us" } },
    });
    expect(two).toMatchObject({ matched: 2, eligible: 0, refusedCount: 2 });
    expect(two.refused.map((r) => r.run).sort()).toEqual(["invoice/inv-5", "invoice/inv-6"]);

    const keyed = await engine.bulk.preview({
      action: "replay",
      selector: { workflow: "invoice", keys: ["inv-1", "inv-4", "inv-7"], tags: { region: "eu" } },
    });
    expect(pinned(keyed)).toEqual(["invoice/inv-1", "invoice/inv-4"]);

    const none = await engine.bulk.preview({ action: "replay", selector: { tags: { customer: "c-3" } } });
    expect(none).toMatchObject({ matched: 0, eligible: 0 });
  });

  it("refuses a malformed tag and an empty tags object alone", async () => {
    const engine = await taggedFailures(await backend.database());
    await expect(
      engine.bulk.preview({ action: "replay", selector: { tags: { "bad name": "x" } } }),
    ).rejects.toMatchObject({ code: "INVALID_TAG" });
    await expect(engine.bulk.preview({ action: "replay", selector: { tags: {} } })).rejects.toThrow(
      /needs a selector/,
    );
  });
});
