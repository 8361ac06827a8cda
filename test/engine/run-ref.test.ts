import { describe, expect, it } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { FakeClock } from "../../src/engine/clock.js";
import { FatalError, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";

let failNext = true;
const charge = workflow({
  state: { charged: 0 },
  run: async (ctx) => {
    await ctx.step("charge", (s) => {
      if (failNext) throw new FatalError("card declined");
      s.state.charged += 1;
    });
    return "paid";
  },
});

describe("run-taking methods accept a RunHandle or an id", () => {
  it("replay, cancel, info, history, entry and result take the handle; the handle replays itself", async () => {
    failNext = true;
    const engine = closeLater(await setup({ use: { charge } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("charge", "c-1");
    await waitForStatus(engine, run, ["failed"]);
    expect((await engine.history(run)).map((e) => e.name)).toEqual(["charge"]);
    expect((await engine.entry(run, "charge")).status).toBe("failed");

    const preview = await engine.replay(run, { dryRun: true });
    expect(preview).toMatchObject({ dryRun: true, applied: false, from: { path: "charge" } });

    failNext = false;
    await run.replay();
    expect(await engine.result(run, { timeout: 5000 })).toBe("paid");
    expect(await run.state()).toEqual({ charged: 1 });

    const other = await engine.getOrCreate("charge", "c-2");
    await waitForStatus(engine, other, ["completed"]);
    expect(await engine.cancel(other)).toBe("completed");
  });

  it("anything else is refused with what was passed and what is expected", async () => {
    failNext = true;
    const engine = closeLater(await setup({ use: { charge } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("charge", "c-3");
    await waitForStatus(engine, run, ["failed"]);
    const info = await run.info();
    const expected = /takes a run: its RunHandle \(from engine.getOrCreate or engine.get\) or its id/;

    const plain = engine.replay({ workflow: "charge", key: "c-3" } as never);
    await expect(plain).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(plain).rejects.toThrow(expected);
    await expect(plain).rejects.toThrow(/engine.replay .* got an object with keys workflow, key\./);

    await expect(engine.cancel("charge/c-3" as never)).rejects.toThrow(
      /engine.cancel takes a run: .* got the string "charge\/c-3". To find a run by workflow and key, use engine.get\(workflow, key\)/,
    );
    await expect(engine.info(info as never)).rejects.toThrow(
      new RegExp(
        `engine.info takes a run: .* This one has an id \\(${info.id}\\): pass it as engine.info\\(value.id`,
      ),
    );
    await expect(engine.result(1.5 as never)).rejects.toThrow(
      /engine.result takes a run: .* got the number 1.5\./,
    );
    await expect(engine.send(undefined as never, "q", {})).rejects.toThrow(
      /engine.send takes a run: .* got undefined\./,
    );
    // The refusals changed nothing: the run is still failed, with its one entry.
    expect((await run.info()).status).toBe("failed");
    expect(await run.history()).toHaveLength(1);
  });
});

const nap = workflow({
  run: async (ctx) => {
    await ctx.sleep("nap", "1h");
    return "rested";
  },
});

describe("a handle names one run of one database", () => {
  it("another database's engine refuses it (its same-numbered run untouched); one on the same database takes it", async () => {
    const clock = new FakeClock();
    const registry = setup({ use: { nap } });
    const dbA = tempDb();
    const a = closeLater(await registry.start({ database: dbA, clock }));
    const b = closeLater(await registry.start({ database: tempDb(), clock }));
    const fromA = await a.getOrCreate("nap", "a-1");
    const second = await a.getOrCreate("nap", "a-2");
    const ofB = await b.getOrCreate("nap", "b-1");
    expect(fromA.id).toBe(ofB.id);
    await waitForStatus(a, fromA, ["sleeping"]);
    await waitForStatus(b, ofB, ["sleeping"]);

    const cancel = b.cancel(fromA);
    await expect(cancel).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(cancel).rejects.toThrow(
      `engine.cancel got the handle of run "nap/a-1" (id ${fromA.id}), but run ${fromA.id} in this engine's database is "nap/b-1": the handle comes from an engine on another database. Pass this engine's own handle: engine.get("nap", "a-1").`,
    );
    await expect(b.replay(fromA, { dryRun: true })).rejects.toThrow(
      /engine.replay got the handle of run "nap\/a-1"/,
    );
    await expect(b.info(fromA)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(b.history(fromA)).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(b.result(fromA, { timeout: 0 })).rejects.toMatchObject({ code: "INVALID_INPUT" });
    await expect(b.info(second)).rejects.toThrow(
      `engine.info got the handle of run "nap/a-2" (id ${second.id}), but run ${second.id} in this engine's database does not exist:`,
    );
    await expect(b.result(second)).rejects.toThrow(
      /engine.result got the handle of run "nap\/a-2" .* does not exist/,
    );
    expect(await ofB.status()).toBe("sleeping");
    expect(await fromA.status()).toBe("sleeping");

    // Another engine on A's database: the same handle names the same run there.
    const c = closeLater(await registry.start({ database: dbA, clock }));
    expect((await c.info(fromA)).key).toBe("a-1");
    expect((await c.history(fromA)).map((e) => e.name)).toEqual(["nap"]);
    expect(["cancelled", "requested"]).toContain(await c.cancel(fromA));
    await waitForStatus(a, fromA, ["cancelled"]);
    expect(await ofB.status()).toBe("sleeping");
  });
});
