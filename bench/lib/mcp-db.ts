// The database scenario (f) reads over MCP: 100,000 runs of 10 steps (1,000,000 entries) and one run of
// 2,000 steps for deep history pages, every run and entry made by the real engine, many runs at a time.
// Built once and kept under bench/.cache (keyed by size and schema version) because it takes minutes.

import fs from "node:fs";
import path from "node:path";
import { FatalError, setup, workflow } from "../../src/index.js";
import { SCHEMA_VERSION } from "../../src/storage/sqlite/migrations.js";
import { CACHE_DIR, partialBuild, pool } from "./common.js";

/** Bump when the built database's content changes. */
const BUILDER_VERSION = 1;
export const LONG_RUN_STEPS = 2000;
/** One order in this many fails at its 8th step. */
const FAIL_EVERY = 50;

const order = workflow({
  description: "An order: reserve, charge, ship (10 steps); one in 50 fails on a declined card.",
  state: { total: 0, items: 0, status: "new" },
  run: async (ctx, input: { customer: string; amount: number; fail: boolean }) => {
    for (let i = 0; i < 10; i++) {
      await ctx.step(`step-${i}`, (s) => {
        if (i === 7 && input.fail) throw new FatalError(`card declined for customer ${input.customer}`);
        s.state.items += 1;
        s.state.total += input.amount;
        if (i === 9) s.state.status = "shipped";
        return { sku: `SKU-${(i * 7919) % 1000}`, qty: i + 1, ok: true };
      });
    }
    return { shipped: true, total: input.amount * 10 };
  },
});

const invoice = workflow({
  description: "An invoice: 10 bookkeeping steps.",
  state: { lines: 0 },
  run: async (ctx, input: { customer: string; amount: number }) => {
    for (let i = 0; i < 10; i++) {
      await ctx.step(`line-${i}`, (s) => {
        s.state.lines += 1;
        return { line: i, amount: input.amount, currency: "EUR" };
      });
    }
    return { lines: 10 };
  },
});

const ledger = workflow({
  description: "A long run: one entry per posting.",
  run: async (ctx, input: { n: number }) => {
    for (let i = 0; i < input.n; i++) await ctx.step(`post-${i}`, () => ({ posting: i }));
    return input.n;
  },
});

export const mcpRegistry = setup({ use: { order, invoice, ledger } });

/** Run keys: order-000000 ... (even i) and invoice-000001 ... (odd i). */
export function runAddress(i: number): { workflow: "order" | "invoice"; key: string } {
  const workflow = i % 2 === 0 ? "order" : "invoice";
  return { workflow, key: `${workflow}-${String(i).padStart(6, "0")}` };
}

export function mcpDatabasePath(runs: number): string {
  return path.join(CACHE_DIR, `mcp-${runs}-s${SCHEMA_VERSION}-b${BUILDER_VERSION}.db`);
}

/** Builds the database at `file` through the engine (skipped if it exists). */
export async function buildMcpDatabase(
  file: string,
  runs: number,
  log: (line: string) => void,
): Promise<void> {
  const partial = partialBuild(file);
  if (partial === null) return;
  const engine = await mcpRegistry.start({ database: partial });
  const t0 = performance.now();
  const wave = 2000;
  for (let from = 0; from < runs; from += wave) {
    const count = Math.min(wave, runs - from);
    await pool(count, count, async (j) => {
      const i = from + j;
      const { workflow, key } = runAddress(i);
      const input = { customer: `c${i % 997}`, amount: (i % 90) + 10 };
      const handle =
        workflow === "order"
          ? await engine.getOrCreate("order", key, { ...input, fail: (i / 2) % FAIL_EVERY === 7 })
          : await engine.getOrCreate("invoice", key, input);
      await handle.result().catch(() => {});
    });
    if ((from / wave) % 10 === 9) {
      const done = from + count;
      const s = (performance.now() - t0) / 1000;
      log(`built ${done.toLocaleString("en")} of ${runs.toLocaleString("en")} runs (${s.toFixed(0)} s)`);
    }
  }
  await (await engine.getOrCreate("ledger", "long", { n: LONG_RUN_STEPS })).result();
  await engine.close();
  fs.renameSync(partial, file);
  for (const suffix of ["-wal", "-shm"]) fs.rmSync(partial + suffix, { force: true });
}
