// A parent wakes when its child ends in another OS process sharing the database: the child's process has
// only the child's code, the parent's only the parent's; the wake-up goes through the store alone
// (SQLite's change counter, PostgreSQL's notifications).

import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { order, payment } from "../../fixtures/workflows/order.js";
import { setup } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const worker = path.join(import.meta.dirname, "child-worker.ts");
const stores = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

describe.each(stores)("a child run in another process, on $name", ({ database }) => {
  it("ends there and wakes its parent here", async () => {
    const db = await database();
    const both = await setup({ use: { order, payment } }).start({ database: db });
    const parent = await both.getOrCreate("order", "o-77", { orderId: "77", amount: 150, card: "4242" });
    await waitForStatus(both, parent, ["waiting"]);
    await waitForStatus(both, await both.get("payment", "pay-77"), ["waiting"]);
    await both.close();

    const orders = closeLater(await setup({ use: { order } }).start({ database: db }));
    const handle = await orders.get("order", "o-77");
    const result = handle.result({ timeout: 30_000 });
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ["--import", "tsx", worker, db, "pay-77"],
      {
        timeout: 30_000,
      },
    );
    expect(JSON.parse(stdout)).toEqual({ receipt: "rcpt-pay-77", amount: 150 });
    expect(await result).toEqual({ orderId: "77", receipt: "rcpt-pay-77" });
  }, 60_000);
});
