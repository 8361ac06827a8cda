// A step that completes on its first attempt stores no attempts of its own (its start, end and status are that
// attempt: about 80 bytes an entry); every reader still sees the one attempt. A retried step keeps them all.
// SQLite and PostgreSQL.

import { describe, expect, it } from "vitest";
import { waitForStatus } from "../../fixtures/wait.js";
import { internals } from "../../src/engine/engine.js";
import { FakeClock, setup, workflow } from "../../src/index.js";
import { closeLater, tempDb } from "../helpers.js";
import { tempSchema } from "../postgres/pg.js";

const BACKENDS = [
  { name: "sqlite", database: async () => tempDb() },
  { name: "postgres", database: async () => (await tempSchema()).url },
];

let failures = 0;
const twice = workflow({
  run: async (ctx) => {
    await ctx.step("plain", () => 1);
    await ctx.step(
      "flaky",
      () => {
        if (failures++ === 0) throw new Error("once");
        return 2;
      },
      { retries: 1, backoff: { initial: "1s", jitter: false } },
    );
  },
});

describe.each(BACKENDS)("attempts as stored on $name", (backend) => {
  it("a first-attempt step stores none and reads back one; a retried step stores both", async () => {
    failures = 0;
    const clock = new FakeClock(Date.UTC(2026, 0, 1));
    const engine = closeLater(
      await setup({ use: { twice } }).start({ database: await backend.database(), clock }),
    );
    const run = await engine.getOrCreate("twice", "t-1", undefined);
    // The retry is due 1 s after the failed attempt: advance only once it has failed.
    await waitForStatus(engine, run, ["retrying"]);
    clock.advance(1000);
    await engine.tick();
    await run.result();
    const rows = await internals(engine).store.allEntries(run.id);
    const stored = Object.fromEntries(rows.map((r) => [r.name, r.attempts]));
    expect(stored.plain).toBeNull();
    expect(JSON.parse(stored.flaky!).map((a: { status: string }) => a.status)).toEqual([
      "failed",
      "completed",
    ]);
    const history = await engine.history(run);
    const plain = history.find((e) => e.name === "plain")!;
    expect(plain.attempts).toEqual([
      { n: 1, startedAt: plain.startedAt, status: "completed", endedAt: plain.endedAt },
    ]);
    expect(history.find((e) => e.name === "flaky")!.attempts).toHaveLength(2);
  });
});
