// replay_runs and cancel_runs select by tags over a real MCP client (in-memory pair): the dry run pins only the
// tagged runs, and list_failures narrowed by tags suggests a replay_runs call carrying the same tags.

import { afterEach, expect, it } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { broken } from "../engine/bulk-invoices.js";
import { Closer, call, connect, tempDb } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

it("a dry run by tags pins only the tagged runs, as list_failures by tags suggests it", async () => {
  const engine = (await broken.start({ database: tempDb(closer) })) as unknown as Engine;
  closer.add(() => engine.close());
  for (let n = 1; n <= 5; n++) {
    const tags = { customer: n <= 2 ? "c-9" : "c-1", region: n === 1 ? "eu" : "us" };
    const run = await engine.getOrCreate("invoice", `inv-${n}`, { n, kind: "tax" }, { tags });
    await run.result().catch(() => {});
  }
  const client = await connect(closer, engine);

  const failures = await call(client, "list_failures", { tags: { customer: "c-9" } });
  const suggested = failures.structuredContent!.failures[0].replay;
  expect(suggested.args).toEqual({
    signature: expect.any(String),
    workflow: "invoice",
    tags: { customer: "c-9" },
  });
  const dry = await call(client, "replay_runs", suggested.args);
  expect(dry.structuredContent).toMatchObject({ dryRun: true, matched: 2, eligible: 2 });
  expect(dry.structuredContent!.samples.map((s: { run: string }) => s.run).sort()).toEqual([
    "invoice/inv-1",
    "invoice/inv-2",
  ]);

  const both = await call(client, "cancel_runs", { tags: { customer: "c-9", region: "eu" } });
  expect(both.structuredContent).toMatchObject({ dryRun: true, matched: 1, refusedCount: 1 });
  expect(both.structuredContent!.refusals).toEqual([
    expect.objectContaining({ run: "invoice/inv-1", status: "failed" }),
  ]);

  const untagged = await call(client, "list_failures", {});
  expect(untagged.structuredContent!.failures[0].replay.args.tags).toBeUndefined();
});
