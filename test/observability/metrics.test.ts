// /metrics over real HTTP, parsed by a parser of the Prometheus exposition format: runs by status, step
// outcomes and durations, commit latency, scheduler lag, messages waiting, leases, MCP calls by tool and outcome,
// moving as runs progress; behind the server's token and Host checks; one registry per engine.

import { spawn } from "node:child_process";
import { once } from "node:events";
import os from "node:os";
import parse, { type Family, type Sample } from "parse-prometheus-text-format";
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import type { Engine } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { serveHttp } from "../../src/mcp/http.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { openSqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { tempDb, until } from "../helpers.js";
import { Closer, call } from "../mcp/helpers.js";
import { httpClient, raw } from "../mcp/http-helpers.js";
import { batch as emptyBatch } from "../storage/backends.js";

const closer = new Closer();
afterEach(() => closer.closeAll());
const TOKEN = "metrics-token";

/** The owner id of a real process of this machine, killed with SIGKILL before this returns. */
async function deadOwner(): Promise<string> {
  const child = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
  await once(child, "spawn");
  const exited = once(child, "exit");
  child.kill("SIGKILL");
  await exited;
  return `${os.hostname()}:${child.pid}:killed`;
}

/** What one scrape gave: the text, and its metric families as the parser reads them. */
interface Scrape {
  text: string;
  families: Family[];
}

/** Scrapes /metrics with the token and parses what came back. */
async function scrape(url: string): Promise<Scrape> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(res.status).toBe(200);
  expect(res.headers.get("content-type")).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  return { text, families: parse(text) };
}

function series(families: Family[], name: string, labels: Record<string, string> = {}): Sample | undefined {
  const family = families.find((f) => f.name === name);
  expect(family, `metric ${name}`).toBeDefined();
  return family!.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
}

/** A counter's or gauge's value (0 when the series does not exist yet). */
const value = (s: Scrape, name: string, labels: Record<string, string> = {}) =>
  Number(series(s.families, name, labels)?.value ?? 0);

/**
 * A histogram's `_count` or `_sum` for one series. The parser folds a histogram's labelled series into one,
 * so these sample lines are parsed on their own (as untyped samples, which keep their labels).
 */
function histogram(
  s: Scrape,
  name: string,
  part: "count" | "sum",
  labels: Record<string, string> = {},
): number {
  expect(s.text).toContain(`# TYPE ${name} histogram`);
  const lines = s.text.split("\n").filter((l) => l.startsWith(`${name}_${part}`));
  if (lines.length === 0) return 0;
  return Number(series(parse(`${lines.join("\n")}\n`), `${name}_${part}`, labels)?.value ?? 0);
}
const count = (s: Scrape, name: string, labels: Record<string, string> = {}) =>
  histogram(s, name, "count", labels);

describe("/metrics", () => {
  it("serves the engine's metrics in Prometheus text, moving as runs progress", async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    let reserveCalls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const order = workflow({
      queues: { confirm: z.object({ ok: z.boolean() }), notes: z.string() },
      run: async (ctx) => {
        await ctx.step(
          "reserve",
          () => {
            reserveCalls++;
            if (reserveCalls === 1) throw new Error("stock service down");
          },
          { retries: 1, backoff: { initial: 1000, jitter: false } },
        );
        await ctx.queue.next("await-confirm", { queue: "confirm" });
        await ctx.step("ship", () => gate);
        return "shipped";
      },
    });
    const engine = (await setup({ use: { order } }).start({
      database: tempDb(),
      clock,
    })) as unknown as Engine;
    closer.add(() => engine.close());
    const http = await serveHttp(() => createMcpServer(engine), {
      port: 0,
      token: TOKEN,
      metrics: () => engine.metrics.scrape(),
    });
    closer.add(() => http.close());
    const url = http.url.replace(/\/mcp$/, "/metrics");

    // Behind the token and the Host check.
    expect((await fetch(url)).status).toBe(401);
    expect((await raw(url, { method: "GET", headers: { host: "evil.example" } })).status).toBe(403);

    let m = await scrape(url);
    expect(value(m, "waymark_runs", { workflow: "order", status: "running" })).toBe(0);
    expect(value(m, "waymark_steps_completed_total", { workflow: "order" })).toBe(0);
    const commitsBefore = count(m, "waymark_commit_duration_seconds");

    const run = await engine.getOrCreate("order", "o-1");
    await until(async () => (await run.status()) === "retrying", "the retry");
    m = await scrape(url);
    expect(value(m, "waymark_runs", { workflow: "order", status: "retrying" })).toBe(1);
    expect(value(m, "waymark_step_attempts_failed_total", { workflow: "order" })).toBe(1);
    expect(value(m, "waymark_steps_failed_total", { workflow: "order" })).toBe(0);
    expect(count(m, "waymark_step_duration_seconds", { workflow: "order", outcome: "failed" })).toBe(1);
    expect(count(m, "waymark_commit_duration_seconds")).toBeGreaterThan(commitsBefore);

    // The retry was due at +1 s; the scheduler ran at +1.5 s: half a second late.
    clock.advance(1500);
    await engine.tick();
    await until(async () => (await run.status()) === "waiting", "the queue wait");
    m = await scrape(url);
    expect(count(m, "waymark_scheduler_lag_seconds", { kind: "retry" })).toBe(1);
    expect(histogram(m, "waymark_scheduler_lag_seconds", "sum", { kind: "retry" })).toBeCloseTo(0.5);
    expect(value(m, "waymark_steps_completed_total", { workflow: "order" })).toBe(1);
    expect(value(m, "waymark_runs", { workflow: "order", status: "retrying" })).toBe(0);
    expect(value(m, "waymark_runs", { workflow: "order", status: "waiting" })).toBe(1);

    // MCP calls through a real client, by tool and outcome; messages nobody consumes are waiting.
    const { client } = await httpClient(closer, http.url, TOKEN);
    for (const body of ['"a"', '"b"']) {
      const sent = await call(client, "send_message", {
        workflow: "order",
        key: "o-1",
        queue: "notes",
        body: JSON.parse(body),
      });
      expect(sent.isError).toBeFalsy();
    }
    const missing = await call(client, "get_run", { workflow: "order", key: "nope" });
    expect(missing.isError).toBe(true);
    m = await scrape(url);
    expect(value(m, "waymark_mcp_calls_total", { tool: "send_message", outcome: "ok" })).toBe(2);
    expect(value(m, "waymark_mcp_calls_total", { tool: "get_run", outcome: "error" })).toBe(1);
    expect(count(m, "waymark_mcp_call_duration_seconds", { tool: "send_message" })).toBe(2);
    expect(value(m, "waymark_queue_messages_waiting", { workflow: "order", queue: "notes" })).toBe(2);

    // While "ship" runs, the run is held here.
    await run.send("confirm", { ok: true });
    await until(async () => (await run.status()) === "running", "the ship step");
    m = await scrape(url);
    expect(value(m, "waymark_leases_held")).toBe(1);
    expect(value(m, "waymark_runs", { workflow: "order", status: "running" })).toBe(1);
    release();
    expect(await run.result({ timeout: 5000 })).toBe("shipped");
    m = await scrape(url);
    expect(value(m, "waymark_leases_held")).toBe(0);
    expect(value(m, "waymark_runs", { workflow: "order", status: "completed" })).toBe(1);
    expect(value(m, "waymark_runs", { workflow: "order", status: "running" })).toBe(0);
    expect(value(m, "waymark_steps_completed_total", { workflow: "order" })).toBe(2);
    expect(count(m, "waymark_step_duration_seconds", { workflow: "order", outcome: "completed" })).toBe(2);
  });

  it("keeps one registry per engine: two engines in one process count apart", async () => {
    const noop = workflow({ run: async (ctx) => ctx.step("only", () => 1) });
    const registry = setup({ use: { noop } });
    const a = (await registry.start({ database: tempDb() })) as unknown as Engine;
    const b = (await registry.start({ database: tempDb() })) as unknown as Engine;
    closer.add(() => a.close());
    closer.add(() => b.close());
    await (await a.getOrCreate("noop", "1")).result({ timeout: 5000 });
    await (await a.getOrCreate("noop", "2")).result({ timeout: 5000 });
    await (await b.getOrCreate("noop", "1")).result({ timeout: 5000 });
    const read = async (e: Engine): Promise<Scrape> => {
      const text = (await e.metrics.scrape()).body;
      return { text, families: parse(text) };
    };
    expect(value(await read(a), "waymark_steps_completed_total", { workflow: "noop" })).toBe(2);
    expect(value(await read(b), "waymark_steps_completed_total", { workflow: "noop" })).toBe(1);
    expect(value(await read(b), "waymark_runs", { workflow: "noop", status: "completed" })).toBe(1);
  });

  it.each([
    ["an owner whose lease expired", async () => "another-host:4242:gone", 20_000],
    ["a process of this machine killed with SIGKILL (lease still running)", deadOwner, 1_000],
  ])("counts a run it takes over from %s once", async (_, makeOwner, after) => {
    const db = tempDb();
    const t0 = Date.UTC(2026, 0, 1);
    const owner = await makeOwner();
    const store = openSqliteStore(db);
    await store.commit(
      emptyBatch(t0, {
        creates: [
          {
            workflow: "noop",
            key: "orphan",
            version: 1,
            input: null,
            initialState: "{}",
            now: t0,
            owner,
            leaseUntil: t0 + 15_000,
          },
        ],
      }),
    );
    await store.close();
    const noop = workflow({ run: async (ctx) => ctx.step("only", () => 1) });
    const clock = new FakeClock(t0 + after);
    const engine = (await setup({ use: { noop } }).start({ database: db, clock })) as unknown as Engine;
    closer.add(() => engine.close());
    expect(await (await engine.get("noop", "orphan")).result({ timeout: 5000 })).toBe(1);
    const text = (await engine.metrics.scrape()).body;
    expect(value({ text, families: parse(text) }, "waymark_leases_taken_over_total")).toBe(1);
  });
});
