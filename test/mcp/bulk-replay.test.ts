// replay_runs through a real MCP client on `waymark mcp --stdio` processes: 30 invoices fail with one signature
// and 5 with another; the dry run by signature pins exactly the 30; the fix lands; a real call with the plan is
// SIGKILLed after its first batch, and a restarted server finishes the plan; the other 5 and a run that failed
// the same way after the dry run stay failed; the same plan again changes nothing.

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js";
import Database from "better-sqlite3";
import { afterEach, describe, expect, it } from "vitest";
import { broken } from "../engine/bulk-invoices.js";
import { Closer, call, ROOT, tempDb, text, until } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

/** `waymark mcp --stdio` serving `registry` on `db`, through an SDK client that confirms every elicitation. */
async function serve(db: string, registry: string, env: Record<string, string> = {}) {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: ["--import", "tsx", "src/cli/main.ts", "mcp", "--stdio", "--db", db, "--registry", registry],
    cwd: ROOT,
    env: { ...(process.env as Record<string, string>), ...env },
    stderr: "pipe",
  });
  const client = new Client({ name: "bulk-test", version: "1.0.0" }, { capabilities: { elicitation: {} } });
  const asked: string[] = [];
  client.setRequestHandler(ElicitRequestSchema, (req) => {
    asked.push(String(req.params.message));
    return { action: "accept", content: { confirm: true } };
  });
  await client.connect(transport);
  closer.add(() => client.close());
  return { client, transport, asked };
}

function planRows(db: string, token: string) {
  const sqlite = new Database(db, { readonly: true });
  try {
    return sqlite
      .prepare(
        "SELECT r.key, p.outcome FROM bulk_plan_runs p JOIN runs r ON r.id = p.run_id WHERE p.token = ? ORDER BY p.position",
      )
      .all(token) as Array<{ key: string; outcome: string | null }>;
  } finally {
    sqlite.close();
  }
}

function replayMarkers(db: string): Map<string, number> {
  const sqlite = new Database(db, { readonly: true });
  try {
    const rows = sqlite
      .prepare(
        "SELECT r.key, count(*) AS n FROM entries e JOIN runs r ON r.id = e.run_id WHERE e.kind = 'replay' GROUP BY r.key",
      )
      .all() as Array<{ key: string; n: number }>;
    return new Map(rows.map((r) => [r.key, r.n]));
  } finally {
    sqlite.close();
  }
}

describe("replay_runs over MCP", () => {
  it("replays exactly the 30 pinned runs after the fix, across a SIGKILL mid-plan, and never again", async () => {
    const db = tempDb(closer);
    const app = await broken.start({ database: db });
    for (let n = 1; n <= 35; n++) {
      const run = await app.getOrCreate("invoice", `inv-${n}`, { n, kind: n <= 30 ? "tax" : "mail" });
      await expect(run.result({ timeout: 20_000 })).rejects.toThrow();
    }
    await app.close();

    // Before the fix: what fails most, and the dry run list_failures points at.
    const first = await serve(db, "test/mcp/bulk-broken-registry.ts");
    const failures = await call(first.client, "list_failures");
    const groups = failures.structuredContent!.failures as Array<Record<string, any>>;
    const tax = groups.find((g) => g.entry === "tax")!;
    expect(tax.count).toBe(30);
    expect(groups.find((g) => g.entry === "mail")!.count).toBe(5);
    expect(tax.replay).toEqual({
      tool: "replay_runs",
      args: { signature: tax.signature, workflow: "invoice" },
    });
    expect(text(failures)).toContain(`replay_runs ${JSON.stringify(tax.replay.args)}`);
    const dry = await call(first.client, tax.replay.tool, tax.replay.args);
    expect(dry.isError).toBeFalsy();
    const preview = dry.structuredContent!;
    expect(preview).toMatchObject({ dryRun: true, matched: 30, eligible: 30, refusedCount: 0 });
    expect(preview.bySignature).toEqual([
      expect.objectContaining({
        signature: tax.signature,
        count: 30,
        pattern: "Tax API answered <n> for invoice <n>",
      }),
    ]);
    expect(preview.samples).toHaveLength(10);
    expect(preview.samples[0].replay).toMatchObject({ from: "tax", rerun: ["tax"] });
    const token = preview.plan as string;
    expect(text(dry)).toContain(`replay_runs {"plan":"${token}"}`);
    expect(
      planRows(db, token)
        .map((r) => r.key)
        .sort(),
    ).toEqual(Array.from({ length: 30 }, (_, i) => `inv-${i + 1}`).sort());
    await first.client.close();

    // A run fails the same way after the dry run: the plan does not take it.
    const again = await broken.start({ database: db });
    await expect(
      (await again.getOrCreate("invoice", "late", { n: 99, kind: "tax" })).result({ timeout: 20_000 }),
    ).rejects.toThrow(/Tax API/);
    await again.close();

    // The fix lands; the real call is killed after its first batch (version 2's code is slow on purpose).
    const second = await serve(db, "test/mcp/bulk-fixed-registry.ts", { WAYMARK_TEST_SLOW_MS: "40" });
    let killedAt: number | null = null;
    const real = second.client.callTool(
      { name: "replay_runs", arguments: { plan: token, batchSize: 5 } },
      undefined,
      {
        timeout: 120_000,
        onprogress: (p) => {
          if (killedAt !== null) return;
          killedAt = p.progress;
          process.kill(second.transport.pid!, "SIGKILL");
        },
      },
    );
    await expect(real).rejects.toThrow();
    expect(second.asked[0]).toMatch(/^Replay 30 runs of plan plan_/);
    expect(killedAt).toBe(5);
    const atKill = planRows(db, token).filter((r) => r.outcome !== null).length;
    expect(atKill).toBeGreaterThanOrEqual(5);
    expect(atKill).toBeLessThan(30);

    // A restarted server carries the plan on.
    const third = await serve(db, "test/mcp/bulk-fixed-registry.ts");
    const rest = await call(third.client, "replay_runs", { plan: token });
    expect(rest.isError).toBeFalsy();
    const r = rest.structuredContent!;
    expect(r.counts.refused).toBe(0);
    expect(r.counts.skipped).toBeGreaterThanOrEqual(atKill);
    expect(r.counts.done + r.counts.skipped).toBe(30);
    expect(r).toMatchObject({ finished: true, progress: { pending: 0, refused: 0 } });
    expect(r.progress.done + r.progress.skipped).toBe(30);
    await until(
      async () => {
        const page = await call(third.client, "list_runs", {
          workflow: "invoice",
          status: "completed",
          limit: 100,
        });
        return (page.structuredContent!.runs as unknown[]).length === 30;
      },
      "the 30 replayed invoices to complete",
      60_000,
    );
    const failed = await call(third.client, "list_runs", {
      workflow: "invoice",
      status: "failed",
      limit: 100,
    });
    expect((failed.structuredContent!.runs as Array<{ key: string }>).map((x) => x.key).sort()).toEqual(
      ["inv-31", "inv-32", "inv-33", "inv-34", "inv-35", "late"].sort(),
    );
    const markers = replayMarkers(db);
    expect(markers.size).toBe(30);
    expect([...markers.values()].every((m) => m === 1)).toBe(true);

    // The same plan again changes nothing.
    const once = await call(third.client, "replay_runs", { plan: token });
    expect(once.structuredContent).toMatchObject({
      counts: { done: 0, refused: 0, skipped: 30 },
      finished: true,
    });
    expect(text(once)).toContain("calling again does nothing more");
    expect(replayMarkers(db)).toEqual(markers);
  }, 240_000);
});
