// `waymark replay` and `waymark cancel`: a dry run by signature pins a plan and prints its token; --plan acts on
// those runs only (here beside the application, which carries the replays out), is audited per run, and does
// nothing more the second time; bad usage and unknown plans are refused with what to do.

import { describe, expect, it } from "vitest";
import { run as cancel } from "../../src/cli/cancel.js";
import { run as replay } from "../../src/cli/replay.js";
import { broken, fixed } from "../engine/bulk-invoices.js";
import { closeLater, tempDb } from "../helpers.js";

function io() {
  let out = "";
  let err = "";
  return {
    io: { out: { write: (t: string) => (out += t) }, err: { write: (t: string) => (err += t) } },
    out: () => out,
    err: () => err,
  };
}

describe("waymark replay / cancel", () => {
  it("replays the runs of one signature through a plan, once", async () => {
    const db = tempDb();
    const before = await broken.start({ database: db });
    for (let n = 1; n <= 4; n++) {
      const r = await before.getOrCreate("invoice", `inv-${n}`, { n, kind: n <= 3 ? "tax" : "mail" });
      await expect(r.result()).rejects.toThrow();
    }
    const sig = (await before.findRun("invoice", "inv-1"))!.failureSignature!;
    await before.close();

    const dry = io();
    expect(await replay(["--signature", sig, "--dry-run", "--db", db], dry.io)).toBe(0);
    expect(dry.out()).toContain("Dry run: replay would act on 3 of the 3 runs selected; nothing changed.");
    expect(dry.out()).toMatch(/e\.g\. invoice\/inv-\d: from "tax", discards 1, re-runs tax, version 1 -> 1/);
    const token = /waymark replay --plan (plan_\S+)/.exec(dry.out())![1]!;

    // The fix lands in the application; the CLI beside it asks it to replay the plan's runs.
    const app = closeLater(await fixed.start({ database: db }));
    const real = io();
    expect(await replay(["--plan", token, "--batch-size", "2", "--db", db], real.io)).toBe(0);
    expect(real.out()).toContain(`replay plan ${token}: 0 done, 3 requested, 0 refused, 0 skipped`);
    expect(real.err()).toContain("waymark replay: replay_runs");
    for (let n = 1; n <= 3; n++) {
      const id = (await app.findRun("invoice", `inv-${n}`))!.id;
      expect((await app.watchRun(id, (r) => r.status === "completed")).reason).toBe("until");
    }
    const audit = await app.audit.list({ runId: (await app.findRun("invoice", "inv-1"))!.id });
    expect(audit.entries).toEqual([
      expect.objectContaining({
        surface: "cli",
        action: "replay_runs",
        args: { plan: token },
        outcome: { ok: true },
      }),
    ]);

    const again = io();
    expect(await replay(["--plan", token, "--db", db], again.io)).toBe(0);
    expect(again.out()).toContain("0 done, 0 requested, 0 refused, 3 skipped");
    expect(again.out()).toContain("running it again does nothing more");
  });

  it("selects by --tag (repeatable, all must hold) and refuses a malformed one", async () => {
    const db = tempDb();
    const before = closeLater(await broken.start({ database: db }));
    for (let n = 1; n <= 4; n++) {
      const tags = { customer: n <= 2 ? "c-9" : "c-1", region: n % 2 ? "eu" : "us" };
      const r = await before.getOrCreate("invoice", `inv-${n}`, { n, kind: "tax" }, { tags });
      await expect(r.result()).rejects.toThrow();
    }
    const one = io();
    expect(await replay(["--tag", "customer=c-9", "--json", "--db", db], one.io)).toBe(0);
    const preview = JSON.parse(one.out());
    expect(preview).toMatchObject({ matched: 2, eligible: 2 });
    expect(preview.samples.map((s: { run: string }) => s.run).sort()).toEqual([
      "invoice/inv-1",
      "invoice/inv-2",
    ]);
    const two = io();
    expect(await replay(["--tag", "customer=c-9", "--tag", "region=us", "--db", db], two.io)).toBe(0);
    expect(two.out()).toContain("Dry run: replay would act on 1 of the 1 runs selected");
    expect(two.out()).toContain("e.g. invoice/inv-2:");
    const bad = io();
    expect(await replay(["--tag", "customer", "--db", db], bad.io)).toBe(2);
    expect(bad.err()).toContain("write it as name=value");
    const invalid = io();
    expect(await replay(["--tag", "bad name=x", "--db", db], invalid.io)).toBe(1);
    expect(invalid.err()).toContain("letters, digits");
  });

  it("refuses bad usage and unknown plans with what to do; --help explains", async () => {
    const db = tempDb();
    const engine = await broken.start({ database: db });
    await engine.close();
    const none = io();
    expect(await cancel(["--db", db], none.io)).toBe(2);
    expect(none.err()).toContain("Say which runs");
    const both = io();
    expect(await cancel(["--plan", "plan_x", "--workflow", "invoice", "--db", db], both.io)).toBe(2);
    expect(both.err()).toContain("pass no selector");
    const unknown = io();
    expect(await cancel(["--plan", "plan_x", "--db", db], unknown.io)).toBe(1);
    expect(unknown.err()).toContain('There is no plan "plan_x"');
    const help = io();
    expect(await replay(["--help"], help.io)).toBe(0);
    expect(help.out()).toContain("Usage: waymark replay");
  });
});
