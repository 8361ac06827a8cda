// The torture workload: workflows whose every side effect is written to a ledger file, so a checker can
// tell which steps really ran, in which process incarnation, and which attempt.

import fs from "node:fs";
import { z } from "zod";
import { Loop, setup, workflow } from "../../src/index.js";

/** Messages each inbox run waits for. */
export const INBOX_MESSAGES = 5;

export interface Ledger {
  file: string;
  gen: number;
  /** Probability of killing this process right after a side effect, before its record. */
  killInStep: number;
  random: () => number;
}

let ledger: Ledger | null = null;

/** Sets where side effects are written (once per process). */
export function useLedger(l: Ledger): void {
  ledger = l;
}

/** The side effect of a step: one ledger line, then maybe a kill before the step's record. */
function effect(run: string, path: string, attempt: number): void {
  if (!ledger) throw new Error("ledger not set");
  fs.appendFileSync(ledger.file, `${ledger.gen}\t${run}\t${path}\t${attempt}\n`);
  if (ledger.random() < ledger.killInStep) process.kill(process.pid, "SIGKILL");
}

const chain = workflow({
  state: { done: [] as number[] },
  run: async (ctx) => {
    for (let i = 0; i < 12; i++) {
      await ctx.step(
        `s${i}`,
        (s) => {
          effect(ctx.key, `s${i}`, s.attempt);
          // Every fifth step fails its first attempt: retries are part of the load.
          if (i % 5 === 4 && s.attempt === 1) throw new Error(`flaky s${i}`);
          s.state.done.push(i);
        },
        { backoff: { initial: 5, jitter: false } },
      );
    }
    return ctx.state.done.length;
  },
});

const sleepy = workflow({
  state: { naps: 0 },
  run: async (ctx) => {
    for (let i = 0; i < 3; i++) {
      await ctx.sleep(`nap-${i}`, 20);
      await ctx.step(`after-nap-${i}`, (s) => {
        effect(ctx.key, `after-nap-${i}`, s.attempt);
        s.state.naps += 1;
      });
    }
    return ctx.state.naps;
  },
});

const inbox = workflow({
  state: { got: [] as number[], sum: 0 },
  queues: { in: z.object({ n: z.number().int() }) },
  run: async (ctx) =>
    ctx.loop("drain", {
      state: { i: 0 },
      historyKeep: 2,
      run: async (c, l) => {
        const m = await c.queue.next("next", { queue: "in" });
        await c.step("add", (s) => {
          effect(ctx.key, `drain#${l.i}/add`, s.attempt);
          s.state.got.push(m.n);
          s.state.sum += m.n;
        });
        return l.i + 1 >= INBOX_MESSAGES ? Loop.break(ctx.state.sum) : Loop.continue({ i: l.i + 1 });
      },
    }),
});

const fan = workflow({
  state: { hits: {} as Record<string, number> },
  queues: { ping: z.object({}) },
  run: async (ctx) => {
    await ctx.join("spread", {
      a: async (c) => {
        for (let i = 0; i < 3; i++) {
          await c.step(`a${i}`, (s) => {
            effect(ctx.key, `spread[a]/a${i}`, s.attempt);
            s.state.hits[`a${i}`] = 1;
          });
        }
      },
      b: async (c) => {
        for (let i = 0; i < 3; i++) {
          await c.step(`b${i}`, (s) => {
            effect(ctx.key, `spread[b]/b${i}`, s.attempt);
            s.state.hits[`b${i}`] = 1;
          });
        }
      },
    });
    const won = await ctx.race("first", {
      nap: async (c) => {
        await c.sleep("short", 15);
        return "nap";
      },
      ping: async (c) => {
        await c.queue.next("never", { queue: "ping" });
        return "ping";
      },
    });
    await ctx.step("end", (s) => {
      effect(ctx.key, "end", s.attempt);
      s.state.hits.end = 1;
    });
    return won.winner;
  },
});

export const tortureRegistry = setup({ use: { chain, sleepy, inbox, fan } });

/** The step paths each workflow records exactly once when it completes (loops keep only recent iterations). */
export const EXPECTED_STEPS: Record<string, (key: string) => string[]> = {
  chain: () => Array.from({ length: 12 }, (_, i) => `s${i}`),
  sleepy: () => [0, 1, 2].map((i) => `after-nap-${i}`),
  inbox: () => Array.from({ length: INBOX_MESSAGES }, (_, i) => `drain#${i}/add`),
  fan: () => [...[0, 1, 2].map((i) => `spread[a]/a${i}`), ...[0, 1, 2].map((i) => `spread[b]/b${i}`), "end"],
};

/** Runs created by incarnation `gen`: a few of each workflow, keyed by incarnation. */
export function runsOf(
  gen: number,
  perWorkflow: number,
): Array<{ workflow: keyof typeof EXPECTED_STEPS; key: string }> {
  const out: Array<{ workflow: keyof typeof EXPECTED_STEPS; key: string }> = [];
  for (const workflow of Object.keys(EXPECTED_STEPS) as Array<keyof typeof EXPECTED_STEPS>) {
    for (let i = 0; i < perWorkflow; i++) out.push({ workflow, key: `g${gen}-${i}` });
  }
  return out;
}

/** A small seeded PRNG (mulberry32), so a torture run can be replayed from its seed. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
