// The inspector's failures view and bulk replay API: GET /api/failures groups failing runs by signature;
// POST /api/bulk/replay with a signature is a dry run that pins a plan, with the plan's token it replays
// exactly those runs. Refused without the token, on a read-only server, and for an expired or unknown
// plan; every call is in the audit.

import { afterEach, expect, test } from "vitest";
import { Closer, tempDb } from "../mcp/helpers.js";
import { failingInvoices, MAIL_KEY, TAX_KEYS } from "./bulk-fixture.js";
import { request, serveInspector } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const TOKEN = "bulk-token";
const auth = { authorization: `Bearer ${TOKEN}` };

test("failures by signature, a dry run that pins the group's runs, and a real call that replays exactly them", async () => {
  const { engine, tax, mail } = await failingInvoices(closer, tempDb(closer));
  const server = await serveInspector(closer, engine, { http: { token: TOKEN } });
  const api = (path: string, body?: unknown, headers: Record<string, string> = auth) =>
    request(`${server.base}/api${path}`, { ...(body === undefined ? {} : { body }), headers });

  const failures = await api("/failures");
  expect(failures.status).toBe(200);
  const groups = failures.json.failures.map((g: any) => [g.signature, g.count, g.entry]);
  expect(groups).toEqual([
    [tax, 3, "tax"],
    [mail, 1, "mail"],
  ]);
  expect(failures.json.failures[0].keys.sort()).toEqual([...TAX_KEYS].sort());

  expect((await api("/bulk/replay", { signature: tax }, {})).status).toBe(401);
  expect((await api("/bulk/replay")).status).toBe(405);
  const bad = await api("/bulk/replay", { signature: "" });
  expect(bad.json.error.code).toBe("INVALID_INPUT");

  const dry = await api("/bulk/replay", { signature: tax, workflow: "invoice" });
  expect(dry.status).toBe(200);
  expect(dry.json).toMatchObject({ action: "replay", matched: 3, eligible: 3, refusedCount: 0 });
  expect(dry.json.samples.map((s: any) => s.run).sort()).toEqual(TAX_KEYS.map((k) => `invoice/${k}`).sort());
  expect(dry.json.samples[0].replay).toMatchObject({ from: "tax", rerun: ["tax"], discardCount: 1 });
  for (const key of [...TAX_KEYS, MAIL_KEY])
    expect((await engine.findRun("invoice", key))!.status).toBe("failed");

  const unknown = await api("/bulk/replay", { plan: "plan_nope" });
  expect([unknown.status, unknown.json.error.code]).toEqual([404, "PLAN_NOT_FOUND"]);
  const both = await api("/bulk/replay", { plan: dry.json.token, signature: tax });
  expect(both.json.error.code).toBe("INVALID_INPUT");

  const real = await api("/bulk/replay", { plan: dry.json.token });
  expect(real.status).toBe(200);
  expect(real.json).toMatchObject({
    total: 3,
    counts: { done: 3, requested: 0, refused: 0, skipped: 0 },
    finished: true,
  });
  for (const key of TAX_KEYS) expect(await (await engine.get("invoice", key)).result()).toBe("paid");
  expect((await engine.findRun("invoice", MAIL_KEY))!.status).toBe("failed");
  const again = await api("/bulk/replay", { plan: dry.json.token });
  expect(again.json.counts).toEqual({ done: 0, requested: 0, refused: 0, skipped: 3 });

  const { entries } = await engine.audit.list({ surface: "inspector" });
  const rows = entries.map((e) => [e.action, e.run?.key ?? null, e.outcome.ok ? "ok" : e.outcome.code]);
  expect(
    rows
      .filter((r) => r[2] === "ok" && r[1] !== null && r[1] !== undefined)
      .map((r) => r[1])
      .sort(),
  ).toEqual([...TAX_KEYS].sort());
  expect(rows).toContainEqual(["replay_runs", null, "PLAN_NOT_FOUND"]);
  expect(rows).toContainEqual(["replay_runs", null, "INVALID_INPUT"]);
  expect(entries.every((e) => e.client.label === "bearer token")).toBe(true);
  expect(JSON.stringify(entries)).not.toContain(TOKEN);
});

test("a plan that expired before it started is refused and changes nothing", async () => {
  const { engine, clock, tax } = await failingInvoices(closer, tempDb(closer));
  const server = await serveInspector(closer, engine);
  const dry = await request(`${server.base}/api/bulk/replay`, { body: { signature: tax } });
  expect(dry.json.matched).toBe(3);
  clock.advance(15 * 60_000 + 1);
  const late = await request(`${server.base}/api/bulk/replay`, { body: { plan: dry.json.token } });
  expect([late.status, late.json.error.code]).toEqual([410, "PLAN_EXPIRED"]);
  expect(late.json.error.message).toMatch(/dry run/);
  for (const key of TAX_KEYS) expect((await engine.findRun("invoice", key))!.status).toBe("failed");
  const { entries } = await engine.audit.list({ surface: "inspector" });
  expect(entries[0]).toMatchObject({ action: "replay_runs", outcome: { ok: false, code: "PLAN_EXPIRED" } });
});

test("a read-only server lists failures but refuses the bulk replay, and audits the refusal", async () => {
  const { engine, tax } = await failingInvoices(closer, tempDb(closer));
  const server = await serveInspector(closer, engine, { inspector: { readOnly: true } });
  const failures = await request(`${server.base}/api/failures`);
  expect(failures.json.failures[0]).toMatchObject({ signature: tax, count: 3 });
  const refused = await request(`${server.base}/api/bulk/replay`, { body: { signature: tax } });
  expect([refused.status, refused.json.error.code]).toEqual([403, "READ_ONLY"]);
  expect(await engine.bulk.plan("plan_x").catch((e) => e.code)).toBe("PLAN_NOT_FOUND");
  for (const key of TAX_KEYS) expect((await engine.findRun("invoice", key))!.status).toBe("failed");
  const { entries } = await engine.audit.list({ surface: "inspector" });
  expect(entries.map((e) => [e.action, e.outcome.ok ? "ok" : e.outcome.code])).toEqual([
    ["replay_runs", "READ_ONLY"],
  ]);
});
