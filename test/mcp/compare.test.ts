// compare_runs through a real SDK client: fixture pairs that differ in the input, in a step's output, in the
// code version and in timing, each named; the default other run; no other run; huge values within budget.

import fs from "node:fs";
import path from "node:path";
import { afterEach, describe, expect, test } from "vitest";
import { driveRun } from "../../fixtures/wait.js";
import type { Engine } from "../../src/engine/engine.js";
import { FakeClock, type RunStatus, setup } from "../../src/index.js";
import { answerSize, MAX_ANSWER_CHARS } from "../../src/mcp/budget.js";
import { bulk, exporter, quote, rates, reportV1, reportV2, signup, timing } from "./compare-workflows.js";
import { Closer, call, connect, expectValidCalls, ROOT, tempDb, text } from "./helpers.js";

const closer = new Closer();
afterEach(async () => {
  await closer.closeAll();
  rates.clear();
  timing.clock = null;
});

const USE = { signup, quote, report: reportV1, exporter };

async function open(db = tempDb(closer), use: Record<string, any> = USE, clock = new FakeClock()) {
  const engine = (await setup({ use }).start({ database: db, clock })) as unknown as Engine;
  closer.add(() => engine.close());
  timing.clock = clock;
  const client = await connect(closer, engine);
  const run = async (workflow: string, key: string, input: unknown, status: RunStatus) => {
    const handle = await engine.getOrCreate(workflow, key, input as never);
    await driveRun(engine, clock, handle, [status]);
    clock.advance(1000);
    return handle;
  };
  return { db, engine, client, clock, run };
}

const ann = { name: "Ann", email: "ann@example.com" };
const bob = { name: "Bob", email: null };

describe("compare_runs", () => {
  test("a difference in the input: the pointer with both values, and where the histories part", async () => {
    const { client, run } = await open();
    await run("signup", "ok-1", { customer: ann, plan: "team" }, "completed");
    await run("signup", "bad-1", { customer: bob, plan: "team" }, "failed");
    const r = await call(client, "compare_runs", { workflow: "signup", key: "bad-1" });
    expect(r.isError).toBeFalsy();
    const c = r.structuredContent!;
    expect(c.other).toMatchObject({ workflow: "signup", key: "ok-1", status: "completed", version: 1 });
    expect(c.otherChosen).toBe("latest-completed");
    expect(c.input.changes).toEqual([
      { pointer: "/customer/name", run: "Bob", other: "Ann" },
      { pointer: "/customer/email", run: null, other: "ann@example.com" },
    ]);
    expect(c.firstDifference).toMatchObject({
      path: "send-welcome",
      reason: "status",
      run: { kind: "step", status: "failed", error: "FatalError: no address to welcome Bob at" },
      other: { kind: "step", status: "completed" },
      state: { changes: [], total: 0 },
    });
    expect(c.outputs).toEqual({ differing: [], total: 0, shared: 1 });
    expect(c.versions).toEqual({ run: 1, other: 1, differ: false });
    expect(c.cut).toEqual([]);
    expectValidCalls(c.nextActions);
    const t = text(r);
    expect(t.split("\n")[0]).toBe(
      'The runs differ in: history at "send-welcome" (step failed (FatalError: no address to welcome Bob at) here; step completed there); input at 2 pointer(s) (/customer/name, /customer/email).',
    );
    expect(t).toContain('/customer/email: null here, "ann@example.com" there');
    expect(t).toContain("Code version: both v1.");
  });

  test("a difference in a step's output with the same input: the step and the pointer in its output", async () => {
    const { client, run } = await open();
    rates.set("EUR", 1.1);
    await run("quote", "q-1", { amount: 100, currency: "EUR" }, "completed");
    rates.set("EUR", null);
    await run("quote", "q-2", { amount: 100, currency: "EUR" }, "failed");
    const r = await call(client, "compare_runs", { workflow: "quote", key: "q-2", otherKey: "q-1" });
    const c = r.structuredContent!;
    expect(c.otherChosen).toBe("given");
    expect(c.input).toEqual({ changes: [], total: 0, more: false });
    expect(c.outputs.differing).toEqual([
      {
        path: "fetch-rate",
        kind: "step",
        run: expect.any(Number),
        other: expect.any(Number),
        changes: [{ pointer: "/rate", run: null, other: 1.1 }],
        total: 1,
        more: false,
      },
    ]);
    // The state where both reached "convert": the rate the step stored.
    expect(c.firstDifference).toMatchObject({
      path: "convert",
      reason: "status",
      state: { changes: [{ pointer: "/rate", run: null, other: 1.1 }], total: 1 },
    });
    const t = text(r);
    expect(t.split("\n")[0]).toContain('output of 1 shared step(s) ("fetch-rate")');
    expect(t).toContain('- "fetch-rate" (#');
    expect(t).toContain("/rate: null here, 1.1 there");
    expect(t).toContain("Input: the same.");
    expect(t).toContain(
      "State there (before the entry, or the side's last state): /rate: null here, 1.1 there.",
    );
  });

  test("a difference in the code version: no same-version run by default, then named first when given", async () => {
    const db = tempDb(closer);
    const first = await open(db, { report: reportV1 });
    await first.run("report", "r-1", { month: "2026-01" }, "completed");
    await first.engine.close();
    const { client, run } = await open(db, { report: [reportV1, reportV2] });
    await run("report", "r-2", { month: "2026-01" }, "failed");

    const none = await call(client, "compare_runs", { workflow: "report", key: "r-2" });
    expect(none.isError).toBeFalsy();
    expect(none.structuredContent!.other).toBeNull();
    expect(none.structuredContent!.otherVersions).toEqual([
      { key: "r-1", version: 1, finishedAt: expect.any(String) },
    ]);
    const next = none.structuredContent!.nextActions;
    expect(next[0]).toMatchObject({
      tool: "compare_runs",
      args: { workflow: "report", key: "r-2", otherKey: "r-1" },
    });
    expectValidCalls(next);
    expect(text(none)).toContain(
      'Nothing to compare with: No other run of report v2 has completed, so there is nothing to compare "report/r-2" with by default.',
    );
    expect(text(none)).toContain('Completed runs on other versions: "r-1" (v1)');

    const r = await call(client, "compare_runs", next[0].args);
    const c = r.structuredContent!;
    expect(c.versions).toEqual({ run: 2, other: 1, differ: true });
    expect(c.firstDifference).toMatchObject({ path: "check-totals", reason: "only-in-run", other: null });
    expect(text(r).split("\n")[0]).toMatch(
      /^The runs differ in: code version \(v2 here, v1 there\); history at "check-totals"/,
    );
    expect(text(r)).toContain("Code versions differ: v2 here, v1 there.");
  });

  test("the default other run: the same version's latest completed run, not a newer failed one or another version's", async () => {
    const db = tempDb(closer);
    const clock = new FakeClock();
    const v1 = await open(db, { report: reportV1 }, clock);
    await v1.run("report", "old", { month: "a" }, "completed");
    await v1.run("report", "latest", { month: "b" }, "completed");
    await v1.engine.close();
    const v2 = await open(db, { report: [reportV1, reportV2] }, clock);
    await v2.run("report", "v2-failed", { month: "c" }, "failed");
    // Created before "latest" finished does not matter; finishing last does: "latest" is chosen for "old"...
    const r = await call(v2.client, "compare_runs", { workflow: "report", key: "old" });
    expect(r.structuredContent!.other.key).toBe("latest");
    // ...and "old" for "latest"; the failed v2 run, the newest of all, is never the default.
    const back = await call(v2.client, "compare_runs", { workflow: "report", key: "latest" });
    expect(back.structuredContent!.other.key).toBe("old");
    expect(text(back).split("\n")[0]).toBe(
      'The runs differ in: input at 1 pointer(s) (/month); output of 1 shared step(s) ("render").',
    );
  });

  test("no run to compare with at all: says so and what to pass", async () => {
    const { client, run } = await open();
    await run("signup", "only", { customer: bob, plan: "solo" }, "failed");
    const r = await call(client, "compare_runs", { workflow: "signup", key: "only" });
    expect(r.isError).toBeFalsy();
    const t = text(r);
    expect(t).toContain("Nothing to compare with: No other run of signup v1 has completed");
    expect(t).toContain("No run of signup has completed on any version.");
    expect(t).toContain("Pass the run to compare with as otherKey");
    expect(r.structuredContent!.nextActions).toEqual([
      {
        kind: "call",
        tool: "list_runs",
        args: { workflow: "signup", status: ["completed"] },
        why: "find a completed run to pass as otherKey",
      },
    ]);
  });

  test("timing outliers: a step that took far longer than in the other run", async () => {
    const { client, run } = await open();
    await run("exporter", "fast", { ms: 40 }, "completed");
    await run("exporter", "slow", { ms: 8000 }, "completed");
    const r = await call(client, "compare_runs", { workflow: "exporter", key: "slow" });
    const c = r.structuredContent!;
    expect(c.timing).toEqual({
      outliers: [{ path: "upload", run: 2, other: 2, runMs: 8000, otherMs: 40, factor: 200 }],
      total: 1,
    });
    expect(c.firstDifference).toBeNull();
    expect(text(r)).toContain('Timing outliers: "upload" 8000 ms here, 40 ms there (200×).');
  });

  test("identical runs: says they do not differ", async () => {
    const { client, run } = await open();
    await run("exporter", "a", { ms: 10 }, "completed");
    await run("exporter", "b", { ms: 10 }, "completed");
    const r = await call(client, "compare_runs", { workflow: "exporter", key: "b" });
    expect(text(r).split("\n")[0]).toBe(
      "The runs do not differ: same code version (v1), same input, every entry in both with the same kind and status, same outputs of the 2 completed entries both have, no timing outliers.",
    );
  });

  test("bad arguments are refused with the fix", async () => {
    const { client, run } = await open();
    await run("exporter", "a", { ms: 10 }, "completed");
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ workflow: "exporter" }, "compare_runs needs the run to compare: workflow and key (or runId)"],
      [{ workflow: "exporter", key: "a", otherKey: "a" }, 'The run and the other run are both "exporter/a"'],
      [{ workflow: "exporter", key: "a", otherWorkflow: "signup" }, "otherWorkflow needs otherKey"],
      [{ workflow: "exporter", key: "a", otherKey: "zz" }, 'There is no run "exporter/zz"'],
      [{ runId: 999 }, "There is no run with id 999"],
    ];
    for (const [args, message] of cases) {
      const r = await call(client, "compare_runs", args);
      expect(r.isError, JSON.stringify(args)).toBe(true);
      expect(text(r)).toContain(message);
    }
  });

  test("hostile and huge values stay within the budget, and the cut is said", async () => {
    const { client, run } = await open();
    const wide = (v: string) =>
      Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}-${"~/".repeat(i % 7)}`, v]));
    const longKey = "K".repeat(50_000);
    await run(
      "signup",
      "big-ok",
      { customer: { ...ann, [longKey]: 1 }, plan: "x".repeat(300_000), extra: wide("a") },
      "completed",
    );
    await run(
      "signup",
      "big-bad",
      { customer: { ...bob, [longKey]: 2 }, plan: "y".repeat(300_000), extra: wide("b") },
      "failed",
    );
    const r = await call(client, "compare_runs", { workflow: "signup", key: "big-bad" });
    expect(r.isError).toBeFalsy();
    expect(answerSize(r)).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
    const c = r.structuredContent!;
    // 20,004 differences; counting stops at 10,000 and says so.
    expect(c.input).toMatchObject({ total: 10_000, more: true });
    expect(c.cut[0]).toMatch(/^input: \d+ of more than 10,000 changes shown$/);
    expect(c.outputs.differing[0]).toMatchObject({ path: "load-plan", total: 1 });
    expect(c.outputs.differing[0].changes[0].run).toMatchObject({ truncated: true, chars: 300_002 });
    // The 50,000-character key's pointer is cut too, saying where the value is whole.
    const long = c.input.changes.find((x: { pointer: string }) => x.pointer.startsWith("/customer/KKK"));
    expect(long.pointer.length).toBeLessThan(2000);
    expect(long.pointer).toContain("more characters: waymark://runs/signup/big-bad]");
    expect(text(r)).toContain("input at more than 10,000 pointer(s)");
    expect(text(r)).toContain("Cut to fit: input:");
    expect(r.content.some((x) => x.type === "resource_link")).toBe(true);
  });
});

describe("compare_runs answer sizes", () => {
  test("a small pair and a 10,000-entry pair whose every output differs stay within the budget", async () => {
    const { client, run } = await open(tempDb(closer), { ...USE, bulk });
    await run("bulk", "small-ok", { steps: 3, offset: 0 }, "completed");
    await run("bulk", "small-other", { steps: 3, offset: 1 }, "completed");
    await run("bulk", "big-ok", { steps: 10_000, offset: 0, blob: "a".repeat(500) }, "completed");
    await run("bulk", "big-other", { steps: 10_000, offset: 1, blob: "b".repeat(500) }, "completed");
    const sizes: Record<string, number> = {};
    for (const [label, key, otherKey] of [
      ["small pair (3 steps each)", "small-other", "small-ok"],
      ["10,000-entry pair (every output differs)", "big-other", "big-ok"],
    ] as const) {
      const r = await call(client, "compare_runs", { workflow: "bulk", key, otherKey });
      expect(r.isError, label).toBeFalsy();
      sizes[label] = answerSize(r);
      expect(sizes[label], label).toBeLessThanOrEqual(MAX_ANSWER_CHARS);
      if (key === "big-other") {
        const c = r.structuredContent!;
        expect(c.outputs.total).toBe(10_000);
        expect(c.run.entries).toBe(10_000);
        expect(c.cut.join("; ")).toMatch(/outputs: \d+ of 10,000 differing steps shown/);
      }
    }
    const dir = path.join(ROOT, "test-artifacts");
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "compare-answer-sizes.json"), `${JSON.stringify(sizes, null, 2)}\n`);
    process.stderr.write(`compare_runs answer sizes (characters): ${JSON.stringify(sizes)}\n`);
  }, 180_000);
});

describe("diagnose_run with a completed sibling", () => {
  test("names what the completed run had that this one lacks, and offers compare_runs before the replay", async () => {
    const { client, run } = await open();
    await run("signup", "ok-1", { customer: ann, plan: "team" }, "completed");
    await run("signup", "bad-1", { customer: bob, plan: "team" }, "failed");
    const r = await call(client, "diagnose_run", { workflow: "signup", key: "bad-1" });
    const d = r.structuredContent!;
    expect(d.category).toBe("fatal-error");
    const siblings = d.evidence.filter((e: { kind: string }) => e.kind === "sibling");
    expect(siblings).toEqual([
      {
        kind: "sibling",
        fact: 'The latest completed run of signup v1 (signup/ok-1) had input.customer.name = "Ann"; here it is "Bob".',
        ref: "run signup/ok-1",
      },
      {
        kind: "sibling",
        fact: 'The latest completed run of signup v1 (signup/ok-1) had input.customer.email set ("ann@example.com"); here it is null.',
        ref: "run signup/ok-1",
      },
    ]);
    expect(text(r)).toContain(
      'Sibling: The latest completed run of signup v1 (signup/ok-1) had input.customer.email set ("ann@example.com"); here it is null.',
    );
    const tools = d.nextActions.map((a: { kind: string; tool?: string }) => a.tool ?? a.kind);
    expect(tools.indexOf("compare_runs")).toBeLessThan(tools.indexOf("replay_run"));
    const compare = d.nextActions.find((a: { tool?: string }) => a.tool === "compare_runs");
    expect(compare.args).toEqual({ workflow: "signup", key: "bad-1", otherKey: "ok-1" });
    expectValidCalls(d.nextActions);
    expect((await call(client, "compare_runs", compare.args)).structuredContent!.other.key).toBe("ok-1");
  });

  test("names a step output the completed run had, when the inputs are the same", async () => {
    const { client, run } = await open();
    rates.set("EUR", 1.1);
    await run("quote", "q-1", { amount: 100, currency: "EUR" }, "completed");
    rates.set("EUR", null);
    await run("quote", "q-2", { amount: 100, currency: "EUR" }, "failed");
    const d = (await call(client, "diagnose_run", { workflow: "quote", key: "q-2" })).structuredContent!;
    expect(d.evidence.filter((e: { kind: string }) => e.kind === "sibling")).toEqual([
      {
        kind: "sibling",
        fact: 'The latest completed run of quote v1 (quote/q-1) had "fetch-rate" output.rate set (1.1); here it is null.',
        entry: 1,
        ref: "run quote/q-1",
      },
    ]);
  });

  test("without a completed run of the same version there is no sibling evidence", async () => {
    const { client, run } = await open();
    await run("signup", "only", { customer: bob, plan: "solo" }, "failed");
    const d = (await call(client, "diagnose_run", { workflow: "signup", key: "only" })).structuredContent!;
    expect(d.evidence.some((e: { kind: string }) => e.kind === "sibling")).toBe(false);
    expect(d.nextActions.some((a: { tool?: string }) => a.tool === "compare_runs")).toBe(false);
  });

  test("hostile sibling values keep the diagnosis within its budget", async () => {
    const { client, run } = await open();
    const long = "k".repeat(30_000);
    const huge = { [long]: 1, name: "x".repeat(200_000), email: "y".repeat(200_000) };
    await run("signup", "ok", { customer: huge, plan: "p".repeat(100_000) }, "completed");
    const bad = { ...huge, [long]: 2, email: null };
    await run("signup", "bad", { customer: bad, plan: "q".repeat(100_000) }, "failed");
    const r = await call(client, "diagnose_run", { workflow: "signup", key: "bad" });
    expect(r.isError).toBeFalsy();
    expect(answerSize(r)).toBeLessThan(8000);
    const siblings = r.structuredContent!.evidence.filter((e: { kind: string }) => e.kind === "sibling");
    expect(siblings.length).toBeGreaterThan(0);
    for (const e of siblings) expect(e.fact.length).toBeLessThan(800);
  });
});
