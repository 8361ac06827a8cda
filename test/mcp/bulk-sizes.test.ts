// Answer sizes of replay_runs and cancel_runs for 300 runs of one signature: the dry run and the real call stay within the
// 20,000-character budget (the sizes are written to stderr for the note).

import { afterEach, expect, it } from "vitest";
import type { Engine } from "../../src/engine/engine.js";
import { answerSize, MAX_ANSWER_CHARS } from "../../src/mcp/budget.js";
import { broken } from "../engine/bulk-invoices.js";
import { Closer, call, connect, tempDb } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

it("a dry run and a real call over 300 runs fit the answer budget", async () => {
  const engine = (await broken.start({ database: tempDb(closer) })) as unknown as Engine;
  closer.add(() => engine.close());
  const runs = [];
  for (let n = 1; n <= 300; n++)
    runs.push(await engine.getOrCreate("invoice", `invoice-${n}`, { n, kind: "tax" }));
  for (const r of runs) await r.result({ timeout: 60_000 }).catch(() => {});
  const signature = (await engine.findRun("invoice", "invoice-1"))!.failureSignature!;
  const client = await connect(closer, engine);
  const dry = await call(client, "replay_runs", { signature });
  expect(dry.structuredContent).toMatchObject({ matched: 300, eligible: 300 });
  const real = await call(client, "replay_runs", { plan: dry.structuredContent!.plan });
  expect(real.structuredContent!.counts.done).toBe(300);
  const sizes = { dryRun: answerSize(dry), real: answerSize(real) };
  process.stderr.write(`replay_runs answer sizes for 300 runs: ${JSON.stringify(sizes)}\n`);
  expect(sizes.dryRun).toBeLessThan(MAX_ANSWER_CHARS);
  expect(sizes.real).toBeLessThan(MAX_ANSWER_CHARS);
  // The replayed runs failed again: a cancel of all 300 refuses every one, each with its reason (the largest answer).
  for (const r of runs) await r.result({ timeout: 60_000 }).catch(() => {});
  const cancelDry = await call(client, "cancel_runs", { signature });
  expect(cancelDry.structuredContent).toMatchObject({ matched: 300 });
  const cancelReal = await call(client, "cancel_runs", { plan: cancelDry.structuredContent!.plan });
  const cancelSizes = { dryRun: answerSize(cancelDry), real: answerSize(cancelReal) };
  process.stderr.write(`cancel_runs answer sizes for 300 finished runs: ${JSON.stringify(cancelSizes)}\n`);
  expect(cancelSizes.dryRun).toBeLessThan(MAX_ANSWER_CHARS);
  expect(cancelSizes.real).toBeLessThan(MAX_ANSWER_CHARS);
}, 240_000);
