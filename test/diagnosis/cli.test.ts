// `waymark diagnose`: a run's diagnosis for a person (or as JSON), failure signatures, and usage errors.

import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { SCENARIOS } from "../../fixtures/failures/index.js";
import { run } from "../../src/cli/diagnose.js";
import { tempDb } from "../helpers.js";
import { scenarioEnv } from "./harness.js";

function collector() {
  let text = "";
  return {
    write: (s: string) => (text += s),
    get text() {
      return text;
    },
  };
}

async function diagnoseCli(args: string[]) {
  const out = collector();
  const err = collector();
  const code = await run(args, { out, err });
  return { code, out: out.text, err: err.text };
}

/** A database holding the null-customer scenario's two failed runs (closed, as an application left it). */
async function failedDb(): Promise<string> {
  const scenario = SCENARIOS.find((s) => s.name === "null-customer")!;
  const env = await scenarioEnv(scenario);
  env.clock!.set(Date.now()); // the CLI reads the wall clock: keep the failures inside its 7-day window
  await scenario.drive(env);
  await env.engine.close();
  return env.db;
}

describe("waymark diagnose", () => {
  it("prints the diagnosis for a person: category, culprit, evidence, what to do with exact calls", async () => {
    const db = await failedDb();
    const { code, out, err } = await diagnoseCli(["welcomeEmail/signup-8", "--db", db]);
    expect(err).toBe("");
    expect(code).toBe(0);
    expect(out).toContain('welcomeEmail/signup-8 [failed, v1]: step-failed, culprit "send-welcome"');
    expect(out).toContain("TypeError: Cannot read properties of null (reading 'email')");
    expect(out).toMatch(/frame: thrown at fixtures\/failures\/null-customer\.ts:\d+ \(addressOf\)/);
    expect(out).toContain("Similar failures: 2 runs failed this way");
    expect(out).toContain("1. You: Fix the code at fixtures/failures/null-customer.ts:");
    expect(out).toContain('replay_run {"workflow":"welcomeEmail","key":"signup-8","dryRun":true}');

    const json = await diagnoseCli(["welcomeEmail/signup-8", "--db", db, "--json"]);
    expect(JSON.parse(json.out)).toMatchObject({
      category: "step-failed",
      culprit: { path: "send-welcome" },
    });

    const failures = await diagnoseCli(["--failures", "--db", db]);
    expect(failures.code).toBe(0);
    expect(failures.out).toContain('2×  welcomeEmail at "send-welcome": TypeError');
    expect(failures.out).toContain("waymark diagnose welcomeEmail/signup-8");
  });

  it("refuses bad usage with 2, and a missing run or database with 1", async () => {
    const db = await failedDb();
    expect((await diagnoseCli([])).code).toBe(2);
    expect((await diagnoseCli(["no-slash", "--db", db])).err).toContain("is not <workflow>/<key>");
    expect((await diagnoseCli(["a/b", "c/d", "--db", db])).code).toBe(2);
    expect((await diagnoseCli(["--failures", "a/b"])).code).toBe(2);
    expect((await diagnoseCli(["--failures", "--since", "soon", "--db", db])).code).toBe(2);
    expect((await diagnoseCli(["--bogus"])).err).toContain("Unknown option '--bogus'");
    const missing = await diagnoseCli(["welcomeEmail/signup-9", "--db", db]);
    expect(missing.code).toBe(1);
    expect(missing.err).toContain('There is no run "welcomeEmail/signup-9"');
    const noDb = await diagnoseCli(["a/b", "--db", path.join(path.dirname(tempDb()), "none.db")]);
    expect(noDb.code).toBe(1);
    expect(noDb.err).toContain("there is no database at");
    expect((await diagnoseCli(["--help"])).out).toContain("Usage: waymark diagnose");
  });

  it("is a verb of the waymark command", async () => {
    const db = await failedDb();
    const tsx = path.resolve("node_modules/.bin/tsx");
    const { stdout } = await promisify(execFile)(
      tsx,
      ["src/cli/main.ts", "diagnose", "welcomeEmail/signup-7", "--db", db],
      {
        timeout: 30_000,
      },
    );
    expect(stdout).toContain('welcomeEmail/signup-7 [failed, v1]: step-failed, culprit "send-welcome"');
  });
});
