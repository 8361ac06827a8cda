// A replay's apply: the whole plan in one store batch, after one claim.

import { expect, it } from "vitest";
import { FatalError, setup, workflow } from "../../src/index.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import type { Store, WriteBatch } from "../../src/storage/store.js";
import { closeLater, tempDb } from "../helpers.js";

const version = (fixed: boolean, v: number) =>
  workflow({
    version: v,
    state: { loaded: 0 },
    queues: {},
    run: async (ctx) => {
      await ctx.step("load", (s) => {
        s.state.loaded += 1;
      });
      await ctx.step("pay", () => {
        if (!fixed) throw new FatalError("bug");
        return "paid";
      });
    },
  });

it("writes the discarded entries, the marker and the run's reset in one commit", async () => {
  const db = tempDb();
  const first = await setup({ use: { wf: version(false, 1) } }).start({ database: db });
  const run = await first.getOrCreate("wf", "k");
  await expect(run.result({ timeout: 5000 })).rejects.toThrow(/bug/);
  await first.close();

  const batches: WriteBatch[] = [];
  let recording = false;
  const sqlite = openSqliteStore(db);
  const store = new Proxy(sqlite, {
    get(target, name, receiver) {
      if (name !== "commit") return Reflect.get(target, name, receiver);
      return (batch: WriteBatch) => {
        if (recording) batches.push(structuredClone(batch));
        return target.commit(batch);
      };
    },
  }) as Store;
  const engine = closeLater(
    await setup({ use: { wf: [version(false, 1), version(true, 2)] } }).start({ database: store }),
  );
  recording = true;
  const plan = await engine.replay(run.id, { fromStep: "load" });
  recording = false;
  expect(plan).toMatchObject({ applied: true, rerun: [{ path: "load" }, { path: "pay" }] });
  expect(batches).toHaveLength(1);
  const [batch] = batches;
  expect(batch!.deleteEntries).toEqual([{ runId: run.id, seqs: [1, 2] }]);
  expect(batch!.entries.map((e) => `${e.scope}/${e.name}:${e.kind}`)).toEqual(["~replay/replay-1:replay"]);
  expect(batch!.runs).toMatchObject([{ id: run.id, status: "pending", version: 2, state: '{"loaded":0}' }]);
  expect(await engine.result(run.id, { timeout: 5000 })).toBeUndefined();
});
