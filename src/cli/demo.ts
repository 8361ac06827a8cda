// `waymark demo`: seeds the sample workflows against a local fake API, prints what it left, and serves.

import fs from "node:fs";
import type { Server } from "node:http";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { DEMO_SCENARIOS } from "../../fixtures/failures/index.js";
import { type FakeApi, redirectFetch, SAMPLE_ORIGIN, startFakeApi } from "../../fixtures/fake-api.js";
import { type FixtureWorkflows, registry } from "../../fixtures/registry.js";
import { type RunRef, waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../engine/engine.js";
import { iso } from "../format.js";
import {
  DEFAULT_DATABASE,
  type HistoryEntry,
  type RunInfo,
  RunNotFoundError,
  type RunStatus,
  type ScheduleInfo,
  type WaymarkEngine,
} from "../index.js";
import { createInspector } from "../inspector/index.js";
import { DEFAULT_HTTP_PORT, type HttpHandle, serveHttp } from "../mcp/http.js";
import { ListenError, listen } from "../mcp/listen.js";
import { createMcpServer } from "../mcp/server.js";
import { DemoWorkspaces } from "./demo-workspaces.js";
import { verbError } from "./verb-error.js";

/** The engine the demo seeds: the fixtures registry, started. */
export type DemoEngine = WaymarkEngine<FixtureWorkflows>;

/** One run the demo left, as printed. */
export interface SeededRun {
  workflow: string;
  key: string;
  status: RunStatus;
  /** False when the run was already in the database (a second `demo` on the same file). */
  created: boolean;
  /** What the run did, in a line. */
  summary: string;
  /** What a person (or an AI client) can do with it next. */
  next: string;
}

/** The runs the demo seeds, by fixed key, so seeding twice finds them instead of starting new ones. */
export const DEMO_RUNS = {
  paidInvoice: { workflow: "invoiceActor", key: "paid" },
  failedInvoice: { workflow: "invoiceActor", key: "tax-outage" },
  approval: { workflow: "approval", key: "expense-42" },
  reminder: { workflow: "reminder", key: "renewal" },
  fanOut: { workflow: "fanOut", key: "order-1001" },
  agentLoop: { workflow: "agentLoop", key: "greet" },
  order: { workflow: "order", key: "order-42" },
  booking: { workflow: "booking", key: "trip-7" },
} as const;

const FINISHED: RunStatus[] = ["completed", "failed", "cancelled"];

async function exists(engine: DemoEngine, workflow: keyof FixtureWorkflows, key: string): Promise<boolean> {
  try {
    await engine.get(workflow, key);
    return true;
  } catch (err) {
    if (err instanceof RunNotFoundError) return false;
    throw err;
  }
}

/** Waits until the run rests in one of `statuses` or has finished; returns its info and history. */
async function settle(
  engine: DemoEngine,
  run: RunRef,
  statuses: RunStatus[],
): Promise<{ info: RunInfo; history: HistoryEntry[] }> {
  const info = await waitForStatus(engine, run, [...statuses, ...FINISHED], { timeoutMs: 60_000 });
  const history = await engine.history(run.id);
  return { info, history };
}

/** A run's time in the demo's lines: ISO, or "never". */
function when(ms: number | null): string {
  return iso(ms) ?? "never";
}

function errorMessage(info: RunInfo): string {
  return info.error ? info.error.message : "no error recorded";
}

const mcp = (tool: string, args: Record<string, unknown>) => `${tool} ${JSON.stringify(args)}`;

/**
 * Seeds the demo's runs in order and waits until each rests where the demo means to leave it:
 * a completed invoice, an invoice failed by the tax API, an approval waiting for a decision, a sleeping
 * reminder, a completed fan-out, a completed agent loop, then the failure scenarios of the corpus marked `demo`
 * (fixtures/failures/). Runs already in the database are kept as they are.
 */
export async function seedDemo(
  engine: DemoEngine,
  api: FakeApi,
  options: { agentWorkspace?: () => string } = {},
): Promise<SeededRun[]> {
  const seeded: SeededRun[] = [];
  const add = (
    ref: { workflow: string; key: string },
    created: boolean,
    info: RunInfo,
    summary: string,
    next: string,
  ) => seeded.push({ ...ref, status: info.status, created, summary, next });

  // 1. An invoice the sample completes.
  {
    const ref = DEMO_RUNS.paidInvoice;
    const created = !(await exists(engine, "invoiceActor", ref.key));
    api.healTax();
    const { info } = await settle(engine, await engine.getOrCreate("invoiceActor", ref.key), []);
    const s = info.state as { invoiceId: string | null; subtotal: number; tax: number; total: number };
    add(
      ref,
      created,
      info,
      info.status === "completed"
        ? `invoice ${s.invoiceId}: ${s.subtotal} + ${s.tax} tax = ${s.total}`
        : errorMessage(info),
      `read its steps: ${mcp("get_history", ref)}`,
    );
  }

  // 2. An invoice the tax API fails: the tax endpoint answers 503 until calculate-tax runs out of retries.
  {
    const ref = DEMO_RUNS.failedInvoice;
    const created = !(await exists(engine, "invoiceActor", ref.key));
    api.failTax();
    try {
      const { info, history } = await settle(engine, await engine.getOrCreate("invoiceActor", ref.key), []);
      const tax = history.find((e) => e.path === "calculate-tax");
      add(
        ref,
        created,
        info,
        info.status === "failed"
          ? `calculate-tax failed ${tax?.attempts?.length ?? "?"} times (HTTP 503 from the tax API); load-subtotal ran once`
          : `${info.status}`,
        `find the culprit: ${mcp("diagnose_run", ref)}; the tax API works again now, so ${mcp("replay_run", ref)} completes it`,
      );
    } finally {
      api.healTax();
    }
  }

  // 3. An approval that waits for a person.
  {
    const ref = DEMO_RUNS.approval;
    const created = !(await exists(engine, "approval", ref.key));
    const run = await engine.getOrCreate("approval", ref.key, { amount: 1250 });
    const { info } = await settle(engine, run, ["waiting"]);
    add(
      ref,
      created,
      info,
      info.status === "waiting"
        ? `amount 1250, waiting on queue "decisions" until ${when(info.wakeAt)}`
        : `${JSON.stringify(info.output)}`,
      `decide: ${mcp("send_message", { ...ref, queue: "decisions", body: { approve: true, by: "you" } })}`,
    );
  }

  // 4. A reminder asleep for a day.
  {
    const ref = DEMO_RUNS.reminder;
    const created = !(await exists(engine, "reminder", ref.key));
    const run = await engine.getOrCreate("reminder", ref.key, {
      to: "ann@example.com",
      text: "Your subscription renews tomorrow.",
    });
    const { info } = await settle(engine, run, ["sleeping"]);
    add(
      ref,
      created,
      info,
      info.status === "sleeping"
        ? `asleep in "wait-a-day" until ${when(info.wakeAt)}, holding no memory or timer`
        : `${JSON.stringify(info.output)}`,
      `see what it waits on: ${mcp("get_run", ref)}`,
    );
  }

  // 5. A fan-out whose SMS branch fails once and retries while the others finish.
  {
    const ref = DEMO_RUNS.fanOut;
    const created = !(await exists(engine, "fanOut", ref.key));
    const run = await engine.getOrCreate("fanOut", ref.key, { orderId: "1001", customer: "ann" });
    const { info, history } = await settle(engine, run, []);
    const sms = history.find((e) => e.path === "notify[sms]/send-sms");
    add(
      ref,
      created,
      info,
      info.status === "completed"
        ? `email, sms and webhook sent in parallel; sms took ${sms?.attempts?.length ?? "?"} attempts`
        : errorMessage(info),
      `look at the retried branch: ${mcp("get_step", { ...ref, step: "notify[sms]/send-sms" })}`,
    );
  }

  // 6. An agent loop doing real tool calls in a temp workspace.
  {
    const ref = DEMO_RUNS.agentLoop;
    const created = !(await exists(engine, "agentLoop", ref.key));
    // A fresh temp workspace only for a new run; an existing run keeps the one it was given.
    const makeWorkspace =
      options.agentWorkspace ?? (() => fs.mkdtempSync(path.join(os.tmpdir(), "waymark-demo-agent-")));
    const run = created
      ? await engine.getOrCreate("agentLoop", ref.key, { workspace: makeWorkspace() })
      : await engine.get("agentLoop", ref.key);
    const { info } = await settle(engine, run, []);
    const where = (info.input as { workspace?: string } | null)?.workspace ?? "?";
    add(
      ref,
      created,
      info,
      info.status === "completed"
        ? `${(info.output as { answer: string }).answer} (workspace ${where}${options.agentWorkspace ? ", removed when the demo stops" : ""})`
        : errorMessage(info),
      `every tool call is a step with its input: ${mcp("get_history", ref)}`,
    );
  }

  // 7. An order paying through a child payment run that waits for the card holder's 3-D Secure answer.
  {
    const ref = DEMO_RUNS.order;
    const created = !(await exists(engine, "order", ref.key));
    const run = await engine.getOrCreate("order", ref.key, { orderId: "42", amount: 180, card: "4242" });
    const { info } = await settle(engine, run, ["waiting"]);
    const child = { workflow: "payment", key: "pay-42" };
    add(
      ref,
      created,
      info,
      info.status === "waiting"
        ? `waiting at "charge" for its child run payment/pay-42, which waits for 3-D Secure`
        : `${info.status}`,
      `see parent and child: ${mcp("get_run", ref)}; confirm the payment: ${mcp("send_message", { ...child, queue: "confirm", body: { ok: true } })}`,
    );
  }

  // 8. A booking whose payment is declined: its flight, hotel and car reservations are undone, latest first.
  {
    const ref = DEMO_RUNS.booking;
    const created = !(await exists(engine, "booking", ref.key));
    const run = await engine.getOrCreate("booking", ref.key, { trip: "7", card: "0000-1111" });
    const { info, history } = await settle(engine, run, []);
    const undone = history
      .filter((e) => e.kind === "rollback" && e.status === "completed")
      .map((e) => e.name);
    add(
      ref,
      created,
      info,
      `failed at capture-payment (card declined); ${undone.length} of 3 reservations undone (${undone.join(", ")})`,
      `see what was undone: ${mcp("diagnose_run", ref)}`,
    );
  }

  // 9. Runs from the failure corpus (fixtures/failures/), each left in trouble for diagnose_run to explain.
  for (const scenario of DEMO_SCENARIOS) {
    const ref = { workflow: scenario.workflow, key: scenario.key };
    const created = !(await exists(engine, scenario.workflow as keyof FixtureWorkflows, ref.key));
    const core = engine as unknown as WaymarkEngine;
    if (created) {
      await scenario.drive({
        engine: internals(core),
        clock: null,
        db: "",
        settle: (run, statuses) =>
          waitForStatus(engine, run, [...statuses, ...FINISHED], { timeoutMs: 60_000 }),
        restart: () =>
          Promise.reject(new Error(`demo scenario "${scenario.name}" cannot restart the engine`)),
      });
    }
    const run = await engine.get(scenario.workflow as keyof FixtureWorkflows, ref.key);
    const d = await core.diagnose(run.id);
    add(
      ref,
      created,
      await run.info(),
      `${d.category}${d.culprit ? ` at "${d.culprit.path}"` : ""}: ${scenario.title}`,
      `why, and what to do: ${mcp("diagnose_run", ref)}`,
    );
  }
  return seeded;
}

/** Prints the seeded runs as a table with what to do next. */
export function formatSeeded(seeded: SeededRun[]): string {
  const names = seeded.map((r) => `${r.workflow}/${r.key}`);
  const width = Math.max(...names.map((n) => n.length));
  const lines = seeded.map(
    (r, i) =>
      `  ${names[i]!.padEnd(width)}  ${r.status.padEnd(9)}  ${r.created ? "" : "(existing) "}${r.summary}`,
  );
  const next = seeded.map((r, i) => `  ${names[i]}: ${r.next}`);
  return `${lines.join("\n")}\n\nNext, from an MCP client on this database:\n${next.join("\n")}\n`;
}

/** The schedules the demo's registry declares, with their next firings. */
export function formatSchedules(schedules: ScheduleInfo[]): string {
  const lines = schedules.map(
    (s) => `  ${s.name} → ${s.workflow}  next ${s.nextDue ?? (s.paused ? "(paused)" : "(not computed yet)")}`,
  );
  return lines.length
    ? `\nUpcoming schedules (waymark schedules --db <file>; list_schedules):\n${lines.join("\n")}\n`
    : "";
}

const USAGE = `Usage: waymark demo [--db <file>] [--once] [--port <n>]

Seeds the sample workflows (fixtures/) against a local fake API that stands in for ${SAMPLE_ORIGIN},
prints the runs it left and keeps the engine running until Ctrl+C, serving the run inspector and MCP
over HTTP on 127.0.0.1. Running it again on the same database finds the same runs (fixed keys).

  --db <file>   SQLite database file (default ${DEFAULT_DATABASE})
  --once        exit after seeding instead of serving
  --port <n>    port of the inspector and MCP endpoint (default ${DEFAULT_HTTP_PORT}; 0 picks a free one)
  -h, --help    show this help
`;

// ---- serving: the run inspector and MCP over HTTP beside the demo's engine ----------------------

/** Binds 127.0.0.1:`port` before the database opens; a busy default port falls back to a free one. */
async function bindDemo(port: number, fallback: boolean): Promise<Server> {
  try {
    return await listen("127.0.0.1", port, "--port 0");
  } catch (err) {
    if (!fallback || (err as ListenError).code !== "EADDRINUSE") throw err;
    return await listen("127.0.0.1", 0);
  }
}

/** Serves the inspector at / and MCP at /mcp on the bound listener. */
function serveDemo(engine: DemoEngine, server: Server): Promise<HttpHandle> {
  const core = engine as unknown as WaymarkEngine;
  // The listener is bound: its address is the inspector's root, which MCP answers about a run link to.
  const address = server.address();
  const inspectorUrl =
    address && typeof address === "object" ? `http://127.0.0.1:${address.port}/` : undefined;
  return serveHttp(() => createMcpServer(core, inspectorUrl ? { inspectorUrl } : {}), {
    server,
    host: "127.0.0.1",
    mount: createInspector(core),
    metrics: () => core.metrics.scrape(),
  });
}

interface Output {
  write(text: string): unknown;
}

/** `waymark demo [--db file] [--once]`; resolves the exit code. */
export async function run(
  args: string[],
  io: { out: Output; err: Output } = { out: process.stdout, err: process.stderr },
): Promise<number> {
  let values: {
    db?: string | undefined;
    once?: boolean | undefined;
    port?: string | undefined;
    help?: boolean | undefined;
  };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        db: { type: "string" },
        once: { type: "boolean" },
        port: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: false,
      strict: true,
    }));
  } catch (err) {
    verbError(io.err, "demo", `${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out.write(USAGE);
    return 0;
  }
  const database = values.db ?? DEFAULT_DATABASE;
  if (database.length === 0) {
    verbError(io.err, "demo", `--db needs a file path.\n\n${USAGE}`);
    return 2;
  }

  const port = values.port === undefined ? DEFAULT_HTTP_PORT : Number(values.port);
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    verbError(io.err, "demo", `--port takes a port number (0-65535); got "${values.port}".\n\n${USAGE}`);
    return 2;
  }

  // Bound before the database opens (--once serves nothing): a port in use leaves no new file behind.
  let listener: Server | undefined;
  if (!values.once) {
    try {
      listener = await bindDemo(port, values.port === undefined);
    } catch (err) {
      verbError(io.err, "demo", err instanceof Error ? err.message : String(err));
      return err instanceof ListenError ? 2 : 1;
    }
  }

  const workspaces = new DemoWorkspaces();
  workspaces.guard();
  const api = await startFakeApi();
  const uninstall = redirectFetch(api.baseUrl);
  let engine: DemoEngine | undefined;
  let http: HttpHandle | undefined;
  try {
    engine = await registry.start({ database });
    io.out.write(
      `Waymark demo: database ${database}, fake API at ${api.baseUrl} standing in for ${SAMPLE_ORIGIN}.\nSeeding...\n\n`,
    );
    const seeded = await seedDemo(engine, api, { agentWorkspace: workspaces.make });
    io.out.write(`${formatSeeded(seeded)}  (serve them with: waymark mcp --db ${database})\n`);
    io.out.write(formatSchedules(await engine.schedules.list()));
    if (values.once) {
      io.out.write("\nSeeded; exiting (--once).\n");
      return 0;
    }
    http = await serveDemo(engine, listener!);
    listener = undefined;
    const page = http.url.replace(/\/mcp$/, "/");
    io.out.write(
      `\nRun inspector: ${page}  (open it in a browser)\nMCP over HTTP: ${http.url}${port !== 0 && http.port !== port ? `  (port ${port} was busy)` : ""}\n`,
    );
    io.out.write("\nServing: the engine keeps running these runs. Press Ctrl+C to stop.\n");
    workspaces.unguard();
    const signal = await new Promise<string>((resolve) => {
      const stop = (sig: NodeJS.Signals) => {
        process.off("SIGINT", stop);
        process.off("SIGTERM", stop);
        resolve(sig);
      };
      process.on("SIGINT", stop);
      process.on("SIGTERM", stop);
    });
    io.out.write(`\n${signal}: closing the engine.\n`);
    return 0;
  } finally {
    listener?.close();
    await http?.close();
    await engine?.close();
    uninstall();
    await api.close();
    workspaces.remove();
    workspaces.unguard();
  }
}
