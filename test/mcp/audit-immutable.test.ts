// No surface can change the audit: every write tool (MCP) and every inspector write endpoint is called, and
// the rows recorded before are still there, unchanged; only new rows were appended. The Store has no method
// that changes or removes a row. And list_audit's full page stays within the answer budget.

import { afterEach, expect, test } from "vitest";
import { answerSize } from "../../src/mcp/budget.js";
import { TOOLS } from "../../src/mcp/tools/index.js";
import { request, serveInspector } from "../inspector/helpers.js";
import { Closer, call, connect, startEngine, tempDb } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

test("every write tool and inspector write endpoint only appends to the audit", {
  timeout: 120_000,
}, async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const client = await connect(closer, engine);
  await call(client, "start_run", { workflow: "approval", key: "a-1", input: { amount: 1 } });
  await call(client, "cancel_run", { workflow: "approval", key: "zz" });
  const before = (await engine.audit.list({ limit: 200 })).entries;
  expect(before.length).toBe(2);

  const writeTools = TOOLS.filter((t) => t.write).map((t) => t.name);
  const target = { workflow: "approval", key: "a-1" };
  for (const name of writeTools)
    await call(client, name, { ...target, id: 1, name: "x", queue: "decisions", body: {} });
  const server = await serveInspector(closer, engine);
  for (const sub of ["messages", "replay", "cancel"])
    await request(`${server.base}/api/runs/approval/a-1/${sub}`, { body: { queue: "decisions", body: {} } });
  await request(`${server.base}/api/bulk/replay`, { body: { signature: "no-such-signature" } });

  const after = (await engine.audit.list({ limit: 200 })).entries;
  expect(after.length).toBe(before.length + writeTools.length + 4);
  expect(after.slice(-before.length)).toEqual(before);
  expect(new Set(after.slice(0, -before.length).map((e) => e.action))).toEqual(new Set(writeTools));
  // The Store API offers appending and reading only.
  const proto = Object.getPrototypeOf(engine.store);
  const methods = Object.getOwnPropertyNames(proto).filter(
    (m) => /audit/i.test(m) && typeof Object.getOwnPropertyDescriptor(proto, m)?.value === "function",
  );
  expect(methods.sort()).toEqual(["appendAudit", "countAudit", "listAudit"]);
});

test("list_audit's full page of large writes stays under 20,000 characters", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const client = await connect(closer, engine);
  for (let i = 0; i < 120; i++) {
    await engine.audit.record(
      {
        surface: "mcp",
        client: { name: "agent", version: "1", session: "s".repeat(36) },
        action: "send_message",
        run: { workflow: "approval", key: `k-${i}`.padEnd(200, "k") },
        args: {
          workflow: "approval",
          key: `k-${i}`,
          body: { text: "t".repeat(5000), list: Array(300).fill("x") },
        },
      },
      { ok: false, code: "INVALID_MESSAGE", message: "m".repeat(3000) },
    );
  }
  const page = await call(client, "list_audit", { limit: 100 });
  const size = answerSize(page);
  process.stderr.write(
    `list_audit full page (limit 100): ${size} characters, ${page.structuredContent!.entries.length} entries\n`,
  );
  expect(size).toBeLessThan(20_000);
  expect(page.structuredContent!.nextCursor).not.toBeNull();
  const next = await call(client, "list_audit", { limit: 100, cursor: page.structuredContent!.nextCursor });
  expect(next.structuredContent!.entries[0].id).toBeLessThan(page.structuredContent!.entries.at(-1).id);
});
