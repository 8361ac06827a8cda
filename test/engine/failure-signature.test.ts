// A failing run's signature is stored with it when it fails (or suspends retrying), in the same write, so
// "what fails most" is a grouped query; a replay clears it; a run that completes has none.

import { describe, expect, it } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { listFailures } from "../../src/diagnosis/index.js";
import type { Engine } from "../../src/engine/engine.js";
import { signatureOf } from "../../src/failure-signature.js";
import { FakeClock, type RunStatus, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";

const broken = new Set<string>(["tax"]);

const invoice = workflow({
  state: { total: 0 },
  run: async (ctx, input: { order: number; nullCustomer?: boolean }) => {
    await ctx.step("load", async (s) => {
      s.state.total = input.order * 10;
    });
    if (input.nullCustomer) {
      const customer = null as null | { email: string };
      return customer!.email; // fails in workflow code, outside any entry
    }
    await ctx.step(
      "tax",
      async () => {
        if (broken.has("tax")) throw new Error(`Tax API 503 for order ${input.order}`);
        return 7;
      },
      { retries: input.order === 99 ? 5 : 0, backoff: { initial: "10m", jitter: false } },
    );
    return "ok";
  },
});

async function stored(engine: Engine, key: string, status: RunStatus) {
  const run = await engine.get("invoice", key);
  await waitForStatus(engine, run, [status]);
  return (await engine.store.getRun(run.id))!;
}

describe("stored failure signatures", () => {
  it("are written when a run fails or suspends retrying, cleared by a replay, and group in list_failures", async () => {
    const clock = new FakeClock();
    const engine = closeLater(
      (await setup({ use: { invoice } }).start({ database: tempDb(), clock })) as unknown as Engine,
    );
    broken.add("tax");
    for (const order of [1, 2, 3]) await engine.getOrCreate("invoice", `o-${order}`, { order });
    await engine.getOrCreate("invoice", "o-null", { order: 4, nullCustomer: true });
    await engine.getOrCreate("invoice", "o-99", { order: 99 });

    const tax = signatureOf({
      workflow: "invoice",
      entry: "tax",
      errorName: "Error",
      message: "Tax API 503 for order 1",
    });
    for (const k of ["o-1", "o-2", "o-3"])
      expect((await stored(engine, k, "failed")).failureSignature).toBe(tax);
    expect((await stored(engine, "o-null", "failed")).failureSignature).toBe(
      signatureOf({
        workflow: "invoice",
        entry: "(workflow code)",
        errorName: "TypeError",
        message: "Cannot read properties of null (reading 'email')",
      }),
    );
    // Retrying (a 10-minute backoff suspends it): the latest attempt's error, the same signature.
    expect((await stored(engine, "o-99", "retrying")).failureSignature).toBe(tax);

    const list = await listFailures(engine, { since: clock.now() - 60_000 });
    expect(list.complete).toBe(true);
    expect(list.scanned).toBe(5);
    expect(list.failures.map((f) => [f.signature, f.count, f.retrying, f.entry])).toEqual([
      [tax, 4, 1, "tax"],
      [expect.any(String), 1, 0, "(workflow code)"],
    ]);
    expect(list.failures[0]!.keys).toEqual(["o-99", "o-3", "o-2", "o-1"]);

    // The fix lands; a replay clears the signature at once, and the run completes without one.
    broken.delete("tax");
    const o1 = await engine.store.findRun("invoice", "o-1");
    await engine.replay(o1!.id);
    expect((await engine.store.getRun(o1!.id))!.failureSignature).toBeNull();
    expect((await stored(engine, "o-1", "completed")).failureSignature).toBeNull();
    expect((await listFailures(engine, { since: clock.now() - 60_000 })).failures[0]!.count).toBe(3);
  });
});
