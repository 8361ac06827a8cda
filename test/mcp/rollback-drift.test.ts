// Code drift during a rollback (issue 20 check): a step is renamed while the run waits, the run diverges
// when the message arrives and rolls back; the handlers of steps the code no longer reaches are unknown, so
// the rollback stops (never skipping one). get_run and diagnose_run call it code drift, not an error in
// Waymark's own file, and name the fix; restoring the old name and replaying undoes s3, s2, s1 once each.
// On SQLite and PostgreSQL.

import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { waitForStatus } from "../../fixtures/wait.js";
import type { Engine } from "../../src/engine/engine.js";
import { setup, workflow } from "../../src/index.js";
import { tempSchema } from "../postgres/pg.js";
import { Closer, call, connect, tempDb, text } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const DATABASES = [
  { name: "sqlite", database: async () => tempDb(closer) },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

/** The workflow with step s2 named `s2`; the handlers log what they undo into `undone`. */
function code(s2: string, undone: string[]) {
  const rb = (n: string) => ({ rollback: async () => void undone.push(n) });
  return workflow({
    queues: { go: z.object({}) },
    run: async (ctx) => {
      await ctx.rollbackCheckpoint("cp");
      await ctx.step("s1", () => "s1-out", rb("s1"));
      await ctx.step(s2, () => "s2-out", rb(s2));
      await ctx.step("s3", () => "s3-out", rb("s3"));
      await ctx.step("after", () => 1);
      await ctx.queue.next("w", { queue: "go" });
      return "done";
    },
  });
}

async function start(database: string, s2: string, undone: string[]) {
  const engine = (await setup({ use: { rbDrift: code(s2, undone) } }).start({
    database,
    deployCheck: false,
  })) as unknown as Engine;
  return engine;
}

describe.each(DATABASES)("code drift during a rollback ($name)", ({ database }) => {
  it("is diagnosed as code drift with the fix, and fixing the name then replaying undoes s3, s2, s1 once each", async () => {
    const db = await database();
    const undone: string[] = [];
    const first = await start(db, "s2", undone);
    const waiting = await first.getOrCreate("rbDrift", "d1");
    await waitForStatus(first, waiting, ["waiting"]);
    await first.close();

    // s2 renamed in the deployed code; the message arrives: divergence at s2, then the rollback stops.
    const drifted = await start(db, "s2-renamed", undone);
    closer.add(() => drifted.close());
    const run = await drifted.getOrCreate("rbDrift", "d1");
    await run.send("go", {});
    const failed = await waitForStatus(drifted, run, ["failed"]);
    expect(undone).toEqual([]);
    expect(failed.error?.code).toBe("ROLLBACK_FAILED");
    expect(failed.error?.message).toContain(
      'no longer matches its history at entry #3 of the root scope (history holds a step named "s2"; the code asked for one named "s2-renamed"), so its rollback could not run the handlers of "s3" and "s2" (the code no longer reaches them); 0 of 3 steps undone. Restore the code\'s old path there (the step\'s old name "s2"',
    );
    expect(failed.error?.message).toContain("then replay the run: the replay runs the remaining handlers");

    const client = await connect(closer, drifted);
    const address = { workflow: "rbDrift", key: "d1" };
    const got = await call(client, "get_run", address);
    expect(text(got)).toContain("so its rollback could not run the handlers of");
    expect(got.structuredContent!.rollback.text).toBe(
      "code drift at s2; 0 of 3 steps undone, s3 could not be undone (the code no longer reaches it, so its handler is unknown); not undone: s3, s2, s1",
    );
    const diagnosis = await call(client, "diagnose_run", address);
    const d = diagnosis.structuredContent!;
    expect(d.category).toBe("code-drift");
    expect(d.summary).toContain(
      'it diverged at entry #3 of the root scope ("s2"): history holds a step named "s2"; the code asks for one named "s2-renamed"',
    );
    expect(d.summary).toContain(
      'the rollback could not run the handlers of "s3" and "s2" because the code no longer reaches them; nothing is undone yet',
    );
    expect(d.summary).toContain(`restore the step's old name "s2" if it was renamed`);
    expect(d.summary).toContain("then replay_run: the replay continues the remaining handlers");
    expect(text(diagnosis)).not.toMatch(/execution\.ts|Fix the workflow code at/);
    expect(text(diagnosis)).toContain('replay_run {"workflow":"rbDrift","key":"d1"}');
    await drifted.close();

    // The old name restored: a replay runs the remaining handlers, each once, latest first.
    const fixed = await start(db, "s2", undone);
    closer.add(() => fixed.close());
    const again = await fixed.getOrCreate("rbDrift", "d1");

    await fixed.replay(again);
    const after = await waitForStatus(fixed, again, ["failed", "completed", "cancelled"]);
    expect(undone).toEqual(["s3", "s2", "s1"]);
    expect(after.status).toBe("failed");
    expect(after.error?.code).toBe("HISTORY_DIVERGED");
    // Rolling back, the code only replayed: the message that arrived was not taken.
    expect((await again.history()).find((e) => e.path === "w")?.status).toBe("waiting");
    expect((await fixed.listMessages(again)).map((m) => m.queue)).toEqual(["go"]);
  });
});
