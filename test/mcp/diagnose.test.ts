// diagnose_run, list_failures and the diagnose prompt through a real SDK client over an in-memory pair.

import { afterEach, describe, expect, test } from "vitest";
import { signatureOf } from "../../src/failure-signature.js";
import { answerSize, MAX_ANSWER_CHARS } from "../../src/mcp/budget.js";
import { batch } from "../storage/backends.js";
import {
  attachEngine,
  Closer,
  call,
  connect,
  expectValidCalls,
  startEngine,
  tempDb,
  text,
  until,
} from "./helpers.js";
import { repair } from "./workflows.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

async function setup() {
  const db = tempDb(closer);
  const engine = await startEngine(closer, db);
  const client = await connect(closer, engine);
  return { db, engine, client };
}

async function settled(
  engine: Awaited<ReturnType<typeof setup>>["engine"],
  workflow: string,
  key: string,
  status: string,
) {
  await until(
    async () => (await engine.store.findRun(workflow, key))?.status === status,
    `${workflow}/${key} ${status}`,
  );
}

describe("diagnose_run", () => {
  test("a fatal error: category, culprit, evidence, exact next calls, a short answer", async () => {
    const { engine, client } = await setup();
    await engine.getOrCreate("flaky", "f-1");
    await settled(engine, "flaky", "f-1", "failed");
    const r = await call(client, "diagnose_run", { workflow: "flaky", key: "f-1" });
    expect(r.isError).toBeFalsy();
    const d = r.structuredContent!;
    expect(d.run).toEqual({ workflow: "flaky", key: "f-1", status: "failed", version: 1 });
    expect(d.category).toBe("fatal-error");
    expect(d.culprit).toMatchObject({ path: "charge", name: "charge", scope: "", kind: "step" });
    expect(d.summary).toContain("card declined: insufficient funds");
    const error = d.evidence.find((e: { kind: string }) => e.kind === "error");
    expect(error).toMatchObject({
      fact: "FatalError: card declined: insufficient funds",
      entry: d.culprit.id,
      attempt: 1,
    });
    expect(d.evidence.find((e: { kind: string }) => e.kind === "frame").fact).toContain(
      "test/mcp/workflows.ts:",
    );
    expect(d.nextActions[0].kind).toBe("person");
    expect(d.nextActions[1]).toMatchObject({
      kind: "call",
      tool: "replay_run",
      args: { workflow: "flaky", key: "f-1", dryRun: true },
    });
    expectValidCalls(d.nextActions);
    expect(text(r)).toContain("fatal-error");
    expect(text(r)).toContain('replay_run {"workflow":"flaky","key":"f-1","dryRun":true}');
    expect(answerSize(r)).toBeLessThan(3000);
  });

  test("following its next actions over MCP completes a run once the person's fix is in", async () => {
    const { engine, client } = await setup();
    await engine.getOrCreate("fixable", "x-1");
    await settled(engine, "fixable", "x-1", "failed");
    const d = (await call(client, "diagnose_run", { workflow: "fixable", key: "x-1" })).structuredContent!;
    expect(d.category).toBe("fatal-error");
    const done: string[] = [];
    for (const a of d.nextActions) {
      if (a.kind === "person") {
        repair("x-1"); // the person deploys the fix
        done.push("person");
        continue;
      }
      const res = await call(client, a.tool, a.args);
      expect(res.isError, `${a.tool}: ${text(res)}`).toBeFalsy();
      done.push(a.tool);
    }
    expect(done).toEqual(["person", "replay_run", "replay_run", "wait_for_run"]);
    expect((await engine.store.findRun("fixable", "x-1"))?.status).toBe("completed");
    const after = await call(client, "diagnose_run", { workflow: "fixable", key: "x-1" });
    expect(after.structuredContent!.category).toBe("healthy");
  });

  test("a healthy waiting run says what it waits for; large values stay within the budget", async () => {
    const { engine, client } = await setup();
    await engine.getOrCreate("approval", "a-1", { amount: 5 });
    await engine.getOrCreate("flaky", "big", { size: 100_000 });
    await settled(engine, "approval", "a-1", "waiting");
    await settled(engine, "flaky", "big", "failed");
    const waiting = await call(client, "diagnose_run", { workflow: "approval", key: "a-1" });
    expect(waiting.structuredContent!.category).toBe("healthy");
    expect(waiting.structuredContent!.culprit.path).toBe("await-decision");
    expect(waiting.structuredContent!.nextActions[0]).toMatchObject({
      tool: "get_run",
      args: { workflow: "approval", key: "a-1" },
    });
    const big = await call(client, "diagnose_run", { workflow: "flaky", key: "big" });
    expect(big.structuredContent!.category).toBe("fatal-error");
    expect(answerSize(big)).toBeLessThan(MAX_ANSWER_CHARS);
    expect(JSON.stringify(big.structuredContent).length).toBeLessThan(2500);
  });

  test("works from an attached process without the code; an unknown run is a domain error", async () => {
    const { db, engine } = await setup();
    await engine.getOrCreate("flaky", "f-9");
    await settled(engine, "flaky", "f-9", "failed");
    const attached = await connect(closer, await attachEngine(closer, db));
    const r = await call(attached, "diagnose_run", { workflow: "flaky", key: "f-9" });
    expect(r.structuredContent!.category).toBe("fatal-error");
    const missing = await call(attached, "diagnose_run", { workflow: "flaky", key: "F-9" });
    expect(missing.isError).toBe(true);
    expect(text(missing)).toContain("RUN_NOT_FOUND");
    expect(text(missing)).toContain('"f-9"');
  });
});

describe("list_failures", () => {
  test("groups failing runs by signature, most frequent first, with a diagnose call for each", async () => {
    const { engine, client } = await setup();
    for (const k of ["f-1", "f-2", "f-3"]) await engine.getOrCreate("flaky", k);
    await engine.getOrCreate("fixable", "x-2");
    for (const k of ["f-1", "f-2", "f-3"]) await settled(engine, "flaky", k, "failed");
    await settled(engine, "fixable", "x-2", "failed");

    const r = await call(client, "list_failures", {});
    expect(r.isError).toBeFalsy();
    const { failures, scanned, complete } = r.structuredContent!;
    expect(scanned).toBe(4);
    expect(complete).toBe(true);
    expect(failures.map((f: { workflow: string; count: number }) => [f.workflow, f.count])).toEqual([
      ["flaky", 3],
      ["fixable", 1],
    ]);
    expect(failures[0]).toMatchObject({
      entry: "charge",
      errorName: "FatalError",
      pattern: "card declined: insufficient funds",
      retrying: 0,
      keys: ["f-3", "f-2", "f-1"],
      diagnose: { tool: "diagnose_run", args: { workflow: "flaky", key: "f-3" } },
    });
    expect(text(r)).toContain('3× flaky at "charge"');
    expectValidCalls(failures.map((f: { diagnose: object }) => ({ kind: "call", ...f.diagnose })));

    // The same signature shows up as similar failures in each run's diagnosis.
    const d = (await call(client, "diagnose_run", { workflow: "flaky", key: "f-1" })).structuredContent!;
    expect(d.similar).toMatchObject({ signature: failures[0].signature, count: 3, keys: ["f-3", "f-2"] });

    const only = await call(client, "list_failures", { workflow: "fixable" });
    expect(only.structuredContent!.failures).toHaveLength(1);
    const future = await call(client, "list_failures", { since: "2999-01-01T00:00:00Z" });
    expect(future.structuredContent!.failures).toEqual([]);
    expect(text(future)).toContain("No failed or retrying runs");
    const bad = await call(client, "list_failures", { since: "last tuesday" });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toContain("ISO time");
  });
});

test("list_failures counts every failing run at any scale: a grouped query, not a scan cut at 5,000", async () => {
  const { engine, client } = await setup();
  const now = engine.clock.now();
  const error = (n: number) =>
    JSON.stringify({
      name: "StepFailedError",
      message: `Step "tax" failed: Tax API 503 for order ${n}`,
      code: "STEP_FAILED",
      details: { step: "tax", cause: { name: "TaxApiError", message: `Tax API 503 for order ${n}` } },
    });
  const N = 6000;
  const created = await engine.store.commit(
    batch(now, {
      creates: Array.from({ length: N }, (_, i) => ({
        workflow: "legacy",
        key: `inv-${i}`,
        version: 1,
        input: null,
        initialState: "{}",
        now: now - N + i,
        owner: null,
        leaseUntil: null,
      })),
    }),
  );
  const signature = signatureOf({
    workflow: "legacy",
    entry: "tax",
    errorName: "TaxApiError",
    message: "x 1",
  });
  await engine.store.commit(
    batch(now, {
      runs: created.created.map(({ run }, i) => ({
        id: run.id,
        status: "failed" as const,
        error: error(i),
        failureSignature: i % 10 === 0 ? "000000000000" : signature,
        finishedAt: now - N + i,
        updatedAt: now - N + i,
        wakeAt: null,
      })),
    }),
  );
  const r = await call(client, "list_failures", {});
  expect(r.isError).toBeFalsy();
  expect(r.structuredContent).toMatchObject({ scanned: N, complete: true });
  expect(r.structuredContent!.failures.map((f: { count: number }) => f.count)).toEqual([5400, 600]);
  expect(r.structuredContent!.failures[0]).toMatchObject({
    workflow: "legacy",
    entry: "tax",
    errorName: "TaxApiError",
    pattern: "Tax API <n> for order <n>",
    keys: ["inv-5999", "inv-5998", "inv-5997", "inv-5996", "inv-5995"],
  });
  expect(answerSize(r)).toBeLessThan(MAX_ANSWER_CHARS);
});

test("the diagnose_failed_run prompt is built on diagnose_run", async () => {
  const { engine, client } = await setup();
  await engine.getOrCreate("flaky", "f-1");
  await settled(engine, "flaky", "f-1", "failed");
  const prompt = await client.getPrompt({
    name: "diagnose_failed_run",
    arguments: { workflow: "flaky", key: "f-1" },
  });
  const body = (prompt.messages[0]!.content as { text: string }).text;
  expect(body).toContain(
    'Diagnosis (diagnose_run {"workflow":"flaky","key":"f-1"}): fatal-error at "charge"',
  );
  expect(body).toContain("FatalError: card declined: insufficient funds");
  expect(body).toContain('replay_run {"workflow":"flaky","key":"f-1","dryRun":true}');
  expect(body).toContain("(person)");
});
