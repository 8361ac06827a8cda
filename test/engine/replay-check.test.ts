// checkAgainstCode without a database: workflow code run over plain history rows in verify mode.

import { describe, expect, it } from "vitest";
import { z } from "zod";
import { asEntries } from "../../src/engine/entries.js";
import { checkAgainstCode } from "../../src/engine/replay-check.js";
import { FakeClock, workflow } from "../../src/index.js";
import type { EntryRow } from "../../src/storage/store.js";
import type { AnyWorkflow } from "../../src/workflow.js";
import { entryRows, runRow } from "./rows.js";

const run = runRow({ status: "waiting" });
const detail = (value: unknown) => ({ detail: JSON.stringify(value) });

function check(def: AnyWorkflow, rows: EntryRow[], clock = new FakeClock()) {
  return checkAgainstCode({ clock, def, run, entries: asEntries(rows), state: "{}" });
}

describe("checkAgainstCode", () => {
  it("replays recorded entries without running a step body and stops at the first new call", async () => {
    const row = entryRows();
    const ran: string[] = [];
    const def = workflow({
      run: async (ctx) => {
        await ctx.step("a", () => ran.push("a"));
        await ctx.queue.next("wait", { queue: "q" });
        await ctx.step("b", () => ran.push("b"));
      },
      queues: { q: z.object({}) },
    });
    const outcome = await check(def, [
      row("", 0, "a", "step", "completed"),
      row("", 1, "wait", "queue", "waiting", detail({ queue: "q", until: null })),
    ]);
    expect(outcome).toEqual({ result: "matches" });
    expect(ran).toEqual([]);
  });

  it("finds a renamed step past the code's own awaits, and names the recorded entry and the fixes", async () => {
    const row = entryRows();
    const def = workflow({
      run: async (ctx) => {
        await ctx.step("a", () => 1);
        for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
        await ctx.step("b-renamed", () => 2);
      },
    });
    const outcome = await check(def, [
      row("", 0, "a", "step", "completed"),
      row("", 1, "b", "step", "running"),
    ]);
    expect(outcome.result).toBe("diverged");
    const error = (outcome as { error: Error }).error;
    expect(error.message).toMatch(/history holds a step named "b"; the code asked for one named "b-renamed"/);
    expect(error.message).toMatch(/restore its old name/);
  });

  it("checks every branch of a join in progress; a branch that ends early does not hold the check up", async () => {
    const body = (renamed: boolean) =>
      workflow({
        run: async (ctx) => {
          await ctx.join("j", {
            a: async (c) => {
              await c.step("a1", () => 1);
            },
            b: async (c) => {
              await c.step("b1", () => 1);
              await c.step(renamed ? "b2-new" : "b2", () => 2);
            },
          });
        },
      });
    const rows = () => {
      const row = entryRows();
      return [
        row("", 0, "j", "join", "running", detail({ branches: ["a", "b"] })),
        row("j[a]", 0, "a1", "step", "completed"),
        row("j[a]", 1, "a-gone", "step", "completed"), // the new code's branch a stops before it
        row("j[b]", 0, "b1", "step", "completed"),
        row("j[b]", 1, "b2", "step", "running"),
      ];
    };
    expect(await check(body(false), rows())).toEqual({ result: "matches" });
    const diverged = await check(body(true), rows());
    expect(diverged.result).toBe("diverged");
    expect((diverged as { error: Error }).error.message).toMatch(
      /scope "j\[b\]".*history holds a step named "b2"/,
    );
  });

  it("code that never reaches its history is given up on when the injected clock passes the limit", async () => {
    const row = entryRows();
    const def = workflow({
      run: async (ctx) => {
        await new Promise(() => {}); // awaits something of its own that never comes
        await ctx.step("a", () => 1);
      },
    });
    const clock = new FakeClock();
    const pending = check(def, [row("", 0, "a", "step", "completed")], clock);
    let settled = false;
    void pending.then(() => (settled = true));
    for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
    expect(settled).toBe(false);
    clock.advance(3000);
    expect(await pending).toEqual({ result: "unfinished" });
  });

  it("a history longer than the code at the root is a divergence once the code finishes", async () => {
    const row = entryRows();
    const def = workflow({ run: async (ctx) => void (await ctx.step("a", () => 1)) });
    const outcome = await check(def, [
      row("", 0, "a", "step", "completed"),
      row("", 1, "b", "step", "completed"),
    ]);
    expect(outcome.result).toBe("diverged");
    expect((outcome as { error: Error }).error.message).toMatch(
      /history holds a step named "b"; the code asked for nothing more/,
    );
  });
});
