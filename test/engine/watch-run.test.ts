// watchRun: the one way to wait on a run, on the injected clock; result() and the MCP tools are built on it.

import { describe, expect, it, vi } from "vitest";
import { z } from "zod";
import type { Engine } from "../../src/engine/engine.js";
import { attach, FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";

const approval = workflow({
  state: { by: "" },
  queues: { decisions: z.object({ by: z.string() }) },
  run: async (ctx) => {
    const d = await ctx.queue.next("decide", { queue: "decisions" });
    await ctx.step("record", (s) => {
      s.state.by = d.by;
    });
    return `approved by ${d.by}`;
  },
});

const quick = workflow({
  run: async (ctx, input: { fail?: boolean }) => {
    const n = await ctx.step("one", () => 1);
    if (input.fail) throw new Error("no");
    return { n };
  },
});

async function start(clock: FakeClock, database = tempDb()): Promise<Engine> {
  return closeLater(
    await setup({ use: { approval, quick } }).start({ database, clock }),
  ) as unknown as Engine;
}

describe("watchRun", () => {
  it("ends when the condition holds, with what the condition returned and the run as read", async () => {
    const clock = new FakeClock();
    const engine = await start(clock);
    const run = await engine.getOrCreate("approval", "a-1");
    const waiting = await engine.watchRun(run.id, (r) => r.status === "waiting" && r.waitQueues);
    expect(waiting).toMatchObject({ reason: "until", value: "|decisions|", run: { status: "waiting" } });

    const finished = engine.watchRun(run.id, (r) => r.status === "completed");
    await run.send("decisions", { by: "ann" });
    expect(await finished).toMatchObject({ reason: "until", value: true, run: { status: "completed" } });
  });

  it("result() of a run executing here settles from its finishing write, without reading the run", async () => {
    const engine = await start(new FakeClock());
    const reads = vi.spyOn(engine.store, "getRun");
    const ok = await engine.getOrCreate("quick", "q-1", {});
    await expect(ok.result()).resolves.toEqual({ n: 1 });
    expect(reads.mock.calls.filter(([id]) => id === ok.id)).toHaveLength(0);
    const bad = await engine.getOrCreate("quick", "q-2", { fail: true });
    await expect(bad.result()).rejects.toThrow(/no/);
    expect(reads.mock.calls.filter(([id]) => id === bad.id)).toHaveLength(0);
    // What it settled from is what was committed; a finished run's result() reads it.
    expect(await engine.store.getRun(ok.id)).toMatchObject({ status: "completed", output: '{"n":1}' });
    reads.mockClear();
    await expect(ok.result()).resolves.toEqual({ n: 1 });
    expect(reads).toHaveBeenCalledTimes(1);
  });

  it("times out on the engine's clock: nothing before the clock moves, at once when it passes the timeout", async () => {
    const clock = new FakeClock();
    const engine = await start(clock);
    const run = await engine.getOrCreate("approval", "a-2");
    await engine.watchRun(run.id, (r) => r.status === "waiting");
    let looks = 0;
    let ended: unknown = null;
    const watch = engine
      .watchRun(
        run.id,
        (r) => {
          looks++;
          return r.status === "completed";
        },
        { timeout: 60_000 },
      )
      .then((w) => {
        ended = w;
        return w;
      });
    // The engine's own turns (a scheduler pass on each advance) give the watch every chance to end early.
    clock.advance(59_999);
    await engine.tick();
    expect(ended).toBeNull();
    clock.advance(1);
    expect(await watch).toMatchObject({ reason: "timeout", value: undefined, run: { status: "waiting" } });

    // Torn down: a later change of the run is not looked at by the ended watch.
    const before = looks;
    await run.send("decisions", { by: "bob" });
    await engine.result(run.id);
    expect(looks).toBe(before);
  });

  it("result({ timeout }) is measured on the engine's clock", async () => {
    const clock = new FakeClock();
    const engine = await start(clock);
    const run = await engine.getOrCreate("approval", "a-3");
    await engine.watchRun(run.id, (r) => r.status === "waiting");
    const result = run.result({ timeout: 3_600_000 });
    clock.advance(3_600_000);
    await expect(result).rejects.toMatchObject({
      code: "RESULT_TIMEOUT",
      message: expect.stringMatching(/did not finish within 3600000 ms \(it is waiting\)/),
    });
  });

  it("a change that happens while the condition is being looked at is looked at right after, not dropped", async () => {
    const clock = new FakeClock();
    const engine = await start(clock);
    const run = await engine.getOrCreate("approval", "a-6");
    await engine.watchRun(run.id, (r) => r.status === "waiting");
    let open!: () => void;
    const gate = new Promise<void>((r) => {
      open = r;
    });
    let first = true;
    const watch = engine.watchRun(run.id, async (r) => {
      if (first) {
        first = false;
        await gate; // the run completes meanwhile: its event arrives during this look
        return false;
      }
      return r.status === "completed";
    });
    await run.send("decisions", { by: "dee" });
    await engine.result(run.id);
    open();
    expect(await watch).toMatchObject({ reason: "until", run: { status: "completed" } });
  });

  it("an aborted signal ends the watch; a run that does not exist is refused", async () => {
    const clock = new FakeClock();
    const engine = await start(clock);
    const run = await engine.getOrCreate("approval", "a-4");
    const controller = new AbortController();
    const watch = engine.watchRun(run.id, (r) => r.status === "completed", { signal: controller.signal });
    controller.abort();
    expect(await watch).toMatchObject({ reason: "aborted", run: { key: "a-4" } });
    await expect(engine.watchRun(9999, () => true)).rejects.toMatchObject({ code: "RUN_NOT_FOUND" });
    await expect(engine.watchRun(run.id, () => true, { timeout: -5 })).rejects.toMatchObject({
      code: "INVALID_INPUT",
    });
  });

  it("sees a run that another process executes change, through the store's change notification", async () => {
    const clock = new FakeClock();
    const database = tempDb();
    const owner = await start(clock, database);
    const run = await owner.getOrCreate("approval", "a-5");
    await owner.watchRun(run.id, (r) => r.status === "waiting");
    const reader = closeLater(await attach({ database, clock }));
    const finished = reader.watchRun(run.id, (r) => r.status === "completed" && r.output);
    await owner.send(run.id, "decisions", { by: "cy" });
    expect(await finished).toMatchObject({ reason: "until", value: '"approved by cy"' });
  });
});
