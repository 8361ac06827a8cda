import { describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForRun, waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, Loop, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";

const HOUR = 3_600_000;

describe("sleeps", () => {
  it("sleep and sleepUntil wake at their deadline, not before", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const wf = workflow({
      run: async (ctx) => {
        await ctx.sleep("short", "10m");
        await ctx.sleepUntil("until", Date.UTC(2026, 0, 2));
        return "woke";
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    await waitForStatus(engine, run, ["sleeping"]);
    const info = await run.info();
    expect(info.wakeAt).toBe(Date.UTC(2026, 0, 1) + 600_000);
    expect(info.waiting).toEqual([{ kind: "sleep", entry: "short", until: info.wakeAt }]);
    expect(internals(engine).active.size).toBe(0); // a sleeping run holds no memory
    clock.advance(599_999);
    await engine.tick();
    expect(await run.status()).toBe("sleeping");
    clock.advance(1);
    await waitForRun(engine, run, (info) => info.wakeAt === Date.UTC(2026, 0, 2), {
      what: "the second sleep",
    });
    clock.set(Date.UTC(2026, 0, 2));
    expect(await run.result({ timeout: 5000 })).toBe("woke");
  });
});

describe("queues", () => {
  const approval = workflow({
    state: { by: null as string | null },
    queues: { decisions: z.object({ approve: z.boolean(), by: z.string() }) },
    run: async (ctx) => {
      await ctx.step("prepare", () => "ready");
      const d = await ctx.queue.next("await-decision", { queue: "decisions", timeout: "1d" });
      if (d === null) return "timed out";
      await ctx.step("record", (s) => {
        s.state.by = d.by;
      });
      return d.approve ? "approved" : "rejected";
    },
  });

  it("keeps a message sent before the wait and consumes it", async () => {
    const engine = closeLater(await setup({ use: { approval } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("approval", "early");
    await run.send("decisions", { approve: true, by: "ann" });
    expect(await run.result({ timeout: 5000 })).toBe("approved");
    const msgs = await internals(engine).store.listMessages(run.id, { includeConsumed: true, limit: 10 });
    expect(msgs).toHaveLength(1);
    expect(msgs[0]!.consumedAt).not.toBeNull();
    const wait = (await run.history()).find((e) => e.name === "await-decision")!;
    expect(wait.output).toEqual({ approve: true, by: "ann" });
    expect(wait.detail).toMatchObject({ queue: "decisions", messageId: msgs[0]!.id });
  });

  it("waits without memory and wakes when a message arrives", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { approval } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("approval", "late");
    await waitForStatus(engine, run, ["waiting"]);
    expect(internals(engine).active.size).toBe(0);
    expect((await run.info()).waiting).toEqual([
      { kind: "queue", entry: "await-decision", queue: "decisions", until: clock.now() + 86_400_000 },
    ]);
    await run.send("decisions", { approve: false, by: "bob" });
    expect(await run.result({ timeout: 5000 })).toBe("rejected");
    expect(await run.state()).toEqual({ by: "bob" });
  });

  it("records a timeout as an outcome the code branches on", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { approval } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("approval", "slow");
    await waitForStatus(engine, run, ["waiting"]);
    clock.advance(86_400_000);
    expect(await run.result({ timeout: 5000 })).toBe("timed out");
    const wait = (await run.history()).find((e) => e.name === "await-decision")!;
    expect(wait.detail).toMatchObject({ timedOut: true });
  });

  it("validates messages with the queue's schema and stores nothing when they are wrong", async () => {
    const engine = closeLater(await setup({ use: { approval } }).start({ database: tempDb() }));
    const run = await engine.getOrCreate("approval", "bad");
    await expect(run.send("decisions", { approve: "yes", by: "ann" } as never)).rejects.toThrow(
      /does not match the queue's schema: approve: .*expected boolean/i,
    );
    await expect(run.send("decsions" as never, {} as never)).rejects.toThrow(
      /has no queue "decsions". Its queues are: decisions/,
    );
    expect(
      await internals(engine).store.listMessages(run.id, { includeConsumed: true, limit: 10 }),
    ).toHaveLength(0);
  });

  it("stores a message once per idempotency key", async () => {
    const clock = new FakeClock();
    const engine = closeLater(await setup({ use: { approval } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("approval", "idem");
    const a = await run.send("decisions", { approve: true, by: "ann" }, { idempotencyKey: "d-1" });
    const b = await run.send("decisions", { approve: false, by: "eve" }, { idempotencyKey: "d-1" });
    expect(b).toEqual({ messageId: a.messageId, duplicate: true });
    expect(await run.result({ timeout: 5000 })).toBe("approved");
    // A retried send after the run read the message and finished is still a duplicate, not an error.
    expect(await run.send("decisions", { approve: true, by: "ann" }, { idempotencyKey: "d-1" })).toEqual({
      messageId: a.messageId,
      duplicate: true,
    });
    await expect(
      run.send("decisions", { approve: true, by: "ann" }, { idempotencyKey: "d-2" }),
    ).rejects.toThrow(/is completed, so no code will read a message/);
  });
});

describe("join and race", () => {
  it("runs branches in their own scopes; a failing branch retries on its own while the others go on", async () => {
    const clock = new FakeClock();
    const timeline: string[] = [];
    let flaky = 0;
    const wf = workflow({
      queues: { go: z.object({}) },
      run: async (ctx) => {
        const out = await ctx.join("fan", {
          mail: async (c) => {
            timeline.push("mail");
            return c.step(
              "send",
              () => {
                flaky++;
                if (flaky === 1) throw new Error("smtp down");
                timeline.push("mail-sent");
                return "mailed";
              },
              { backoff: { initial: "1m", jitter: false } },
            );
          },
          chat: async (c) => {
            await c.step("post", () => timeline.push("chat-posted"));
            await c.queue.next("wait-go", { queue: "go" });
            return c.step("post-2", () => {
              timeline.push("chat-2");
              return "chatted";
            });
          },
        });
        const [mail, chat] = out;
        return { mail, chat, same: out.mail === mail };
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    // The chat branch goes on while mail waits for its retry; then both wait, so the run suspends.
    await waitForStatus(engine, run, ["retrying"]);
    expect(timeline).toEqual(["mail", "chat-posted"]);
    expect((await run.info()).waiting!.map((w) => w.kind).sort()).toEqual(["queue", "retry"]);
    await run.send("go", {});
    // Chat finishes, and the run suspends again on mail's retry.
    await waitForRun(engine, run, (r) => timeline.includes("chat-2") && r.status === "retrying", {
      what: "chat to finish",
    });
    clock.advance(60_000);
    expect(await run.result({ timeout: 5000 })).toEqual({ mail: "mailed", chat: "chatted", same: true });
    const history = await run.history();
    expect(history.map((e) => e.path)).toEqual([
      "fan",
      "fan[mail]/send",
      "fan[chat]/post",
      "fan[chat]/wait-go",
      "fan[chat]/post-2",
    ]);
    expect(history.find((e) => e.path === "fan[mail]/send")!.attempts).toHaveLength(2);
    // Replay after resumes ran the recorded steps once each.
    expect(timeline.filter((t) => t === "chat-posted")).toHaveLength(1);
  });

  it("race: the first branch to complete wins and the others are cancelled", async () => {
    const clock = new FakeClock();
    const wf = workflow({
      queues: { answer: z.string() },
      run: async (ctx) =>
        ctx.race("reply-or-timeout", {
          reply: (c) => c.queue.next("await-reply", { queue: "answer" }),
          timeout: async (c) => {
            await c.sleep("patience", "1h");
            return "gave up";
          },
        }),
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const first = await engine.getOrCreate("wf", "answered");
    const second = await engine.getOrCreate("wf", "ignored");
    await waitForStatus(engine, second, ["waiting"]);
    await first.send("answer", "yes");
    expect(await first.result({ timeout: 5000 })).toEqual({ winner: "reply", value: "yes" });
    clock.advance(HOUR);
    expect(await second.result({ timeout: 5000 })).toEqual({ winner: "timeout", value: "gave up" });
    const entries = await second.history();
    expect(entries.find((e) => e.kind === "race")!.detail).toMatchObject({ winner: "timeout" });
  });
});

describe("loops", () => {
  it("keeps only recent iterations' history, and resumes mid-loop from its recorded state", async () => {
    const clock = new FakeClock();
    const runs: number[] = [];
    const wf = workflow({
      state: { sum: 0 },
      queues: { tick: z.number() },
      run: async (ctx) =>
        ctx.loop("agent", {
          state: { i: 0 },
          historyKeep: 3,
          run: async (c, s) => {
            const n = await c.queue.next("next-number", { queue: "tick" });
            await c.step("add", (step) => {
              runs.push(n);
              step.state.sum += n;
            });
            return s.i + 1 >= 10 ? Loop.break({ iterations: s.i + 1 }) : Loop.continue({ i: s.i + 1 });
          },
        }),
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const run = await engine.getOrCreate("wf", "k");
    for (let i = 1; i <= 10; i++) {
      // Iteration i - 1 is waiting for its number, with the run suspended: each message wakes it anew.
      const wait = `agent#${i - 1}/next-number`;
      await waitForRun(
        engine,
        run,
        async (r) =>
          r.status === "waiting" &&
          (await run.history()).some((e) => e.path === wait && e.status === "waiting"),
        { what: `${wait} to wait` },
      );
      await run.send("tick", i);
    }
    expect(await run.result({ timeout: 5000 })).toEqual({ iterations: 10 });
    expect(runs).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(await run.state()).toEqual({ sum: 55 });
    const history = await run.history();
    const iterations = new Set(history.filter((e) => e.scope.startsWith("agent#")).map((e) => e.scope));
    expect([...iterations]).toEqual(["agent#7", "agent#8", "agent#9"]);
    // State before the last kept "add" is still derivable after compaction.
    const last = history.find((e) => e.path === "agent#9/add")!;
    const detail = await engine.entry(run.id, last.id);
    expect(detail.stateBefore).toEqual({ sum: 45 });
    expect(detail.stateAfter).toEqual({ sum: 55 });
    const first = await engine.entry(run.id, "agent");
    expect(first.stateBefore).toEqual({ sum: 0 });
  });
});

describe("broadcast", () => {
  it("sends progress to listeners, and not again on replay", async () => {
    const clock = new FakeClock();
    const wf = workflow({
      run: async (ctx) => {
        ctx.broadcast("progress", { pct: 50 });
        await ctx.sleep("nap", "1m");
        ctx.broadcast("progress", { pct: 100 });
      },
    });
    const engine = closeLater(await setup({ use: { wf } }).start({ database: tempDb(), clock }));
    const seen: unknown[] = [];
    engine.on((e) => {
      if (e.type === "broadcast") seen.push(e.data);
    });
    const run = await engine.getOrCreate("wf", "k");
    await waitForStatus(engine, run, ["sleeping"]);
    clock.advance(60_000);
    await run.result({ timeout: 5000 });
    expect(seen).toEqual([{ pct: 50 }, { pct: 100 }]);
  });
});
