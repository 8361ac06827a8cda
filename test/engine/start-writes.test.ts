// What a start writes before and after its first pass: definitions stored as they are now are not written
// again (a restart that changes nothing leaves the workflows table as it was); a changed one is. Code
// without schedules does not write the schedules table when none is live there.

import { expect, it, vi } from "vitest";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";

const T0 = Date.UTC(2026, 0, 1);

it("a restart publishes only the workflow definitions that changed", async () => {
  const database = tempDb();
  const plain = workflow({ run: async () => 1 });
  const described = workflow({ description: "now described", run: async () => 1 });
  const meta = async (use: Record<string, typeof plain>, now: number) => {
    const engine = closeLater(await setup({ use }).start({ database, clock: new FakeClock(now) }));
    const rows = await internals(engine).store.workflowMeta();
    await engine.close();
    return rows.map((r) => [r.name, r.description, r.registeredAt]);
  };
  expect(await meta({ a: plain, b: plain }, T0)).toEqual([
    ["a", null, T0],
    ["b", null, T0],
  ]);
  expect(await meta({ a: plain, b: plain }, T0 + 1000)).toEqual([
    ["a", null, T0],
    ["b", null, T0],
  ]);
  expect(await meta({ a: plain, b: described }, T0 + 2000)).toEqual([
    ["a", null, T0],
    ["b", "now described", T0 + 2000],
  ]);
});

it("a start with no schedules in its code, and none live in the database, writes no schedules", async () => {
  const database = tempDb();
  const plain = workflow({ run: async () => 1 });
  const engine = closeLater(await setup({ use: { plain } }).start({ database }));
  const store = internals(engine).store;
  await engine.close();
  const sync = vi.spyOn(Object.getPrototypeOf(store), "syncSchedules");
  try {
    const again = closeLater(await setup({ use: { plain } }).start({ database }));
    expect(sync).not.toHaveBeenCalled();
    expect(await internals(again).store.schedules()).toEqual([]);
    await again.close();
  } finally {
    sync.mockRestore();
  }
});
