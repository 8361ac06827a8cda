import { describe, expect, it } from "vitest";
import { waitForRun, waitForStatus } from "../../fixtures/wait.js";
import { FakeClock, FatalError, setup, workflow } from "../../src/index.js";
import { closeLater, entryReached, tempDb } from "../helpers.js";

describe("steps", () => {
  it("records each step once and never re-runs a recorded step when the run resumes", async () => {
    const db = tempDb();
    const clock = new FakeClock();
    const timeline: string[] = [];
    const wf = workflow({
      state: { total: 0 },
      run: async (ctx) => {
        const a = await ctx.step("a", (s) => {
          timeline.push("a");
          s.state.total += 1;
          return 1;
        });
        const b = await ctx.step("b", () => {
          timeline.push("b");
          return a + 1;
        });
        await ctx.sleep("nap", "1h");
        const c = await ctx.step("c", (s) => {
          timeline.push("c");
          s.state.total += 10;
          return b + 1;
        });
        return { a, b, c };
      },
    });
    const registry = setup({ use: { wf } });
    const first = await registry.start({ database: db, clock });
    const run = await first.getOrCreate("wf", "k1");
    await waitForStatus(first, run, ["sleeping"]);
    await first.close();
    expect(timeline).toEqual(["a", "b"]);

    const second = closeLater(await registry.start({ database: db, clock }));
    clock.advance(60 * 60_000);
    const again = await second.get("wf", "k1");
    expect(await again.result({ timeout: 5000 })).toEqual({ a: 1, b: 2, c: 3 });
    expect(timeline).toEqual(["a", "b", "c"]);
    expect(await again.state()).toEqual({ total: 11 });
    const history = await again.history();
    expect(history.map((e) => `${e.path}:${e.kind}:${e.status}`)).toEqual([
      "a:step:completed",
      "b:step:completed",
      "nap:sleep:completed",
      "c:step:completed",
    ]);
    expect(history[0]!.stateChange).toEqual({ "/total": { before: 0, after: 1 } });
    expect(history[0]!.attempts).toHaveLength(1);
  });

  it("refuses a result that is not JSON, naming the step and the value's type", async () => {
    const wf = workflow({
      run: async (ctx) => {
        await ctx.step("make-date", () => new Date(0));
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(/make-date/);
    const info = await run.info();
    expect(info.status).toBe("failed");
    expect(info.error?.message).toMatch(
      /The result of step "make-date" is not JSON-serialisable: the value is a Date/,
    );
    const [entry] = await run.history();
    expect(entry!.attempts).toHaveLength(1); // not retried: it would fail the same way
  });

  it("retries with exponential backoff, recording every attempt with its error", async () => {
    const clock = new FakeClock();
    let calls = 0;
    const wf = workflow({
      run: async (ctx) =>
        ctx.step(
          "flaky",
          () => {
            calls++;
            if (calls < 3) throw new Error(`boom ${calls}`);
            return "ok";
          },
          { retries: 3, backoff: { initial: "1s", factor: 2, jitter: false } },
        ),
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    await waitForStatus(engine, run, ["retrying"]);
    expect(calls).toBe(1);
    const [waiting] = await run.history();
    expect(waiting!.attempts![0]!.retryAt).toBe(clock.now() + 1000);
    clock.advance(999);
    await engine.tick();
    expect(calls).toBe(1);
    clock.advance(1);
    await waitForRun(engine, run, (r) => calls === 2 && r.status === "retrying", {
      what: "the second attempt's retry wait",
    });
    clock.advance(2000);
    expect(await run.result({ timeout: 5000 })).toBe("ok");
    const [entry] = await run.history();
    expect(entry!.attempts!.map((a) => [a.n, a.status, a.error?.message ?? null])).toEqual([
      [1, "failed", "boom 1"],
      [2, "failed", "boom 2"],
      [3, "completed", null],
    ]);
    expect(entry!.attempts![0]!.error!.stack).toMatch(/boom 1/);
    expect(
      entry!.attempts!.every((a) => typeof a.startedAt === "number" && typeof a.endedAt === "number"),
    ).toBe(true);
  });

  it("fails the step after its last retry, and the run with it", async () => {
    const clock = new FakeClock();
    const wf = workflow({
      run: async (ctx) =>
        ctx.step(
          "always",
          () => {
            throw new TypeError("nope");
          },
          { retries: 1, backoff: 10 },
        ),
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    await waitForStatus(engine, run, ["retrying"]);
    clock.advance(10);
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(
      /Step "always" of run "wf\/k" failed after 2 attempts: TypeError: nope/,
    );
    const info = await run.info();
    expect(info.error?.code).toBe("STEP_FAILED");
    const [entry] = await run.history();
    expect(entry!.status).toBe("failed");
    expect(entry!.attempts).toHaveLength(2);
  });

  it("fails at once on a FatalError, without retries", async () => {
    let calls = 0;
    const wf = workflow({
      run: async (ctx) =>
        ctx.step("charge", () => {
          calls++;
          throw new FatalError("card declined");
        }),
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(
      /fatal error \(not retried\): FatalError: card declined/,
    );
    expect(calls).toBe(1);
  });

  it("lets workflow code catch a failed step and go on", async () => {
    const wf = workflow({
      run: async (ctx) => {
        try {
          await ctx.step("bad", () => {
            throw new FatalError("no");
          });
        } catch (err) {
          return await ctx.step("compensate", () => `handled ${(err as Error).name}`);
        }
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    expect(await run.result({ timeout: 5000 })).toBe("handled StepFailedError");
  });

  it("times out an attempt and fires its AbortSignal", async () => {
    let aborted: unknown = null;
    const wf = workflow({
      run: async (ctx) =>
        ctx.step(
          "slow",
          (s) =>
            new Promise((_, reject) => {
              s.signal.addEventListener("abort", () => {
                aborted = s.signal.reason;
                reject(s.signal.reason);
              });
            }),
          { timeout: 30, retries: 0 },
        ),
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(/timed out after 30 ms/);
    expect((aborted as Error).name).toBe("StepTimeoutError");
    const [entry] = await run.history();
    expect(entry!.attempts![0]!.status).toBe("timed-out");
  });

  it("records a step's input and commits its state with its record; a failed attempt's state is discarded", async () => {
    const clock = new FakeClock();
    let calls = 0;
    const wf = workflow({
      state: { items: [] as string[], note: "" },
      run: async (ctx) => {
        await ctx.step(
          "add",
          (s) => {
            calls++;
            s.state.items.push(`try-${calls}`);
            s.state.note = "dirty";
            if (calls === 1) throw new Error("first attempt fails after writing state");
            s.state.note = "clean";
          },
          { input: { sku: "A-1" }, backoff: 5 },
        );
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    await waitForStatus(engine, run, ["retrying"]);
    expect(await run.state()).toEqual({ items: [], note: "" });
    clock.advance(5);
    await run.result({ timeout: 5000 });
    expect(await run.state()).toEqual({ items: ["try-2"], note: "clean" });
    const [entry] = await run.history();
    expect(entry!.input).toEqual({ sku: "A-1" });
    expect(entry!.stateChange).toEqual({
      "/items": { before: [], after: ["try-2"] },
      "/note": { before: "", after: "clean" },
    });
  });

  it("ctx.state outside a step reads the committed state and refuses writes, saying where to write", async () => {
    const seen: unknown[] = [];
    const wf = workflow({
      state: { n: 0, tags: ["a"] as string[], nested: { deep: 1 } },
      run: async (ctx) => {
        await ctx.step("bump", (s) => {
          s.state.n = 5;
        });
        seen.push(
          ctx.state.n,
          JSON.stringify(ctx.state),
          ctx.state.tags.map((t) => t.toUpperCase()),
        );
        for (const write of [
          () => {
            (ctx.state as { n: number }).n = 9;
          },
          () => (ctx.state.tags as string[]).push("b"),
          () => {
            (ctx.state.nested as { deep: number }).deep = 2;
          },
          () => delete (ctx.state as { n?: number }).n,
        ]) {
          try {
            write();
            seen.push("written");
          } catch (err) {
            seen.push((err as Error).message);
          }
        }
        return ctx.state.n;
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    expect(await run.result({ timeout: 5000 })).toBe(5);
    expect(seen.slice(0, 3)).toEqual([5, '{"n":5,"tags":["a"],"nested":{"deep":1}}', ["A"]]);
    expect(seen.slice(3)).toHaveLength(4);
    for (const message of seen.slice(3)) {
      expect(message).toMatch(/ctx.state is read-only outside a step .*await ctx.step\("name", \(step\) =>/);
    }
    expect(await run.state()).toEqual({ n: 5, tags: ["a"], nested: { deep: 1 } });
  });

  it("refuses ctx used inside a step (a closure over ctx) at once, failing the step without retries", async () => {
    let outerCalls = 0;
    const wf = workflow({
      run: async (ctx) => {
        await ctx.step("outer", async () => {
          outerCalls++;
          const a = await ctx.step("inner", () => 1);
          return a + 1;
        });
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(
      /ctx was used inside step "outer". A step is one recorded unit/,
    );
    expect(outerCalls).toBe(1);
    expect((await run.history()).map((e) => [e.path, e.status])).toEqual([["outer", "failed"]]);
  });

  it("fails the run when a step calls ctx without awaiting it (the refusal is sticky, not a dropped promise)", async () => {
    let after = 0;
    const dropped: unknown[] = [];
    const wf = workflow({
      run: async (ctx) => {
        await ctx.step("outer", () => {
          // A closure over ctx, its promise dropped: the step itself completes.
          ctx.step("inner", () => 1).catch((err) => dropped.push(err));
          return "outer done";
        });
        await ctx.step("after", () => ++after);
        return "finished";
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("wf", "k");
    await expect(run.result({ timeout: 5000 })).rejects.toThrow(
      /ctx was used inside step "outer". A step is one recorded unit/,
    );
    expect(dropped).toHaveLength(1);
    expect(after).toBe(0);
    expect((await run.history()).map((e) => [e.path, e.status])).toEqual([["outer", "completed"]]);
  });

  it("rejects duplicate and malformed names with errors that say how to fix them", async () => {
    const wf = workflow({
      run: async (ctx, input: { bad: string }) => {
        if (input.bad === "dup") {
          await ctx.step("same", () => 1);
          await ctx.step("same", () => 2);
        } else if (input.bad === "factor") {
          await ctx.step("f", () => 1, { backoff: { factor: -2 } });
        } else {
          await ctx.step("a/b", () => 1);
        }
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    const dup = await engine.getOrCreate("wf", "dup", { bad: "dup" });
    await expect(dup.result({ timeout: 5000 })).rejects.toThrow(
      /the step "same" takes a name already used in this scope. Steps, sleeps, .*give each call its own name/,
    );
    const slash = await engine.getOrCreate("wf", "slash", { bad: "slash" });
    await expect(slash.result({ timeout: 5000 })).rejects.toThrow(/cannot contain "\/"/);
    const factor = await engine.getOrCreate("wf", "factor", { bad: "factor" });
    await expect(factor.result({ timeout: 5000 })).rejects.toThrow(/backoff factor must be a number from 1/);
  });
});

describe("state under parallel steps", () => {
  it("a step in one branch commits only its own changes; a failed step's changes vanish with it", async () => {
    let aWrote!: () => void;
    const aWroteP = new Promise<void>((r) => {
      aWrote = r;
    });
    let sbFailed!: Promise<unknown>;
    const wf = workflow({
      state: { a: 0, b: 0 },
      run: async (ctx) => {
        try {
          await ctx.join("j", {
            a: (c) =>
              c.step("sa", async (s) => {
                s.state.a = 1;
                aWrote();
                await sbFailed;
                return "a";
              }),
            b: (c) =>
              c.step(
                "sb",
                async (s) => {
                  await aWroteP;
                  s.state.b = 1;
                  throw new Error("boom");
                },
                { retries: 0 },
              ),
          });
        } catch {
          // the join fails because sb failed; sa's committed change must stay, sb's must not appear
        }
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    sbFailed = entryReached(engine, "j[b]/sb", "failed");
    const run = await engine.getOrCreate("wf", "k");
    await run.result({ timeout: 5000 });
    const history = await run.history();
    const sa = history.find((e) => e.name === "sa");
    // sa may have been cancelled when sb failed; whatever it committed is exactly its own change.
    expect(["completed", "cancelled"]).toContain(sa?.status);
    if (sa?.status === "completed") expect(sa.stateChange).toEqual({ "/a": { before: 0, after: 1 } });
    expect((await run.state()).b).toBe(0);
    expect(history.find((e) => e.name === "sb")!.stateChange).toBeUndefined();
  });

  it("two branches changing different keys both commit, each recording only its own change", async () => {
    // sa writes first and commits last (after sb's commit), so both are in flight with their own changes.
    let aWrote!: () => void;
    const aWroteP = new Promise<void>((r) => {
      aWrote = r;
    });
    let sbCommitted!: Promise<unknown>;
    const wf = workflow({
      state: { a: 0, b: 0 },
      run: async (ctx) => {
        await ctx.join("j", {
          a: (c) =>
            c.step("sa", async (s) => {
              s.state.a = 1;
              aWrote();
              await sbCommitted;
            }),
          b: (c) =>
            c.step("sb", async (s) => {
              await aWroteP;
              s.state.b = 2;
            }),
        });
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    sbCommitted = entryReached(engine, "j[b]/sb");
    const run = await engine.getOrCreate("wf", "k");
    await run.result({ timeout: 5000 });
    expect(await run.state()).toEqual({ a: 1, b: 2 });
    const history = await run.history();
    expect(history.find((e) => e.name === "sa")!.stateChange).toEqual({ "/a": { before: 0, after: 1 } });
    expect(history.find((e) => e.name === "sb")!.stateChange).toEqual({ "/b": { before: 0, after: 2 } });
    const sa = await engine.entry(run.id, "j[a]/sa");
    expect(sa.stateAfter).toEqual({ a: 1, b: 2 });
  });
});

describe("state diffs", () => {
  it("records nested changes by path, so branches writing different keys of one object both commit", async () => {
    let smsCommitted!: Promise<unknown>; // email writes after sms committed, so its state before holds sms's change
    const wf = workflow({
      state: { sent: {} as Record<string, string>, count: 0 },
      run: async (ctx) => {
        await ctx.join("notify", {
          email: (c) =>
            c.step("send", async (s) => {
              await smsCommitted;
              s.state.sent.email = "m1";
            }),
          sms: (c) =>
            c.step("send", (s) => {
              s.state.sent.sms = "m2";
              s.state.count = 1;
            }),
        });
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb() }));
    smsCommitted = entryReached(engine, "notify[sms]/send");
    const run = await engine.getOrCreate("wf", "k");
    await run.result({ timeout: 5000 });
    expect(await run.state()).toEqual({ sent: { email: "m1", sms: "m2" }, count: 1 });
    const history = await run.history();
    expect(history.find((e) => e.path === "notify[email]/send")!.stateChange).toEqual({
      "/sent/email": { after: "m1" },
    });
    expect(history.find((e) => e.path === "notify[sms]/send")!.stateChange).toEqual({
      "/sent/sms": { after: "m2" },
      "/count": { before: 0, after: 1 },
    });
    expect((await engine.entry(run.id, "notify[email]/send")).stateBefore).toEqual({
      sent: { sms: "m2" },
      count: 1,
    });
    // The join itself changed nothing of its own: before it, the state as it was; after it, its branches' work.
    await expect(engine.entry(run.id, "send")).rejects.toThrow(
      /Nested entries of that name, by path: notify\[email\]\/send, notify\[sms\]\/send/,
    );
    const join = await engine.entry(run.id, "notify");
    expect(join.stateBefore).toEqual({ sent: {}, count: 0 });
    expect(join.stateAfter).toEqual({ sent: { email: "m1", sms: "m2" }, count: 1 });
  });
});
