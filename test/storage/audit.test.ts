// Store conformance, the audit: rows appended and read newest first by run, target, surface and time, counted,
// paged by id; the database itself refuses to change or delete a row. SQLite and PostgreSQL alike.

import { describe, expect, it } from "vitest";
import type { AuditAppend } from "../../src/storage/store.js";
import { BACKENDS } from "./backends.js";
import { T0 } from "./fixtures.js";

function row(n: number, over: Partial<AuditAppend> = {}): AuditAppend {
  return {
    at: T0 + n * 1000,
    surface: "mcp",
    client: JSON.stringify({ name: "claude", version: "1.0" }),
    action: "send_message",
    workflow: "wf",
    runKey: `k${n % 3}`,
    runId: (n % 3) + 1,
    args: JSON.stringify({ n }),
    argsCut: false,
    ok: true,
    errorCode: null,
    errorMessage: null,
    ...over,
  };
}

describe.each(BACKENDS)("$name store: audit", (backend) => {
  it("appends rows with growing ids and reads them back whole, newest first", async () => {
    const store = await (await backend.fresh()).open();
    expect(await store.listAudit({ limit: 10 })).toEqual([]);
    const a = await store.appendAudit(row(1));
    const refused = row(2, {
      surface: "inspector",
      ok: false,
      errorCode: "RUN_FINISHED",
      errorMessage: "Run wf/k2 completed",
      argsCut: true,
      runId: null,
    });
    const b = await store.appendAudit(refused);
    expect(b).toBeGreaterThan(a);
    const rows = await store.listAudit({ limit: 10 });
    expect(rows).toEqual([
      { id: b, ...refused },
      { id: a, ...row(1) },
    ]);
  });

  it("filters by run id, target, surface and time window; counts; pages by id", async () => {
    const store = await (await backend.fresh()).open();
    for (let n = 0; n < 12; n++)
      await store.appendAudit(row(n, { surface: n % 2 ? "cli" : "mcp", runKey: `k${n % 3}` }));
    const byRun = await store.listAudit({ runId: 2, limit: 100 });
    expect(byRun.map((r) => JSON.parse(r.args).n)).toEqual([10, 7, 4, 1]);
    expect(await store.countAudit({ runId: 2 })).toBe(4);
    const byTarget = await store.listAudit({ workflow: "wf", runKey: "k0", limit: 100 });
    expect(byTarget.map((r) => JSON.parse(r.args).n)).toEqual([9, 6, 3, 0]);
    const cli = await store.listAudit({ surface: "cli", limit: 100 });
    expect(cli.map((r) => JSON.parse(r.args).n)).toEqual([11, 9, 7, 5, 3, 1]);
    const window = await store.listAudit({ since: T0 + 3000, until: T0 + 6000, limit: 100 });
    expect(window.map((r) => JSON.parse(r.args).n)).toEqual([5, 4, 3]);
    expect(await store.countAudit({ since: T0 + 3000, until: T0 + 6000, surface: "mcp" })).toBe(1);
    const first = await store.listAudit({ limit: 5 });
    const second = await store.listAudit({ limit: 5, beforeId: first.at(-1)!.id });
    expect([...first, ...second].map((r) => JSON.parse(r.args).n)).toEqual([11, 10, 9, 8, 7, 6, 5, 4, 3, 2]);
    expect(await store.countAudit({})).toBe(12);
  });

  it("refuses UPDATE and DELETE of audit rows in the database itself", async () => {
    const fresh = await backend.fresh();
    const store = await fresh.open();
    await store.appendAudit(row(1));
    const before = await store.listAudit({ limit: 10 });
    await expect(fresh.raw("UPDATE {t}audit SET ok = NOT ok")).rejects.toThrow(/append-only/);
    await expect(fresh.raw("DELETE FROM {t}audit")).rejects.toThrow(/append-only/);
    expect(await store.listAudit({ limit: 10 })).toEqual(before);
  });
});
