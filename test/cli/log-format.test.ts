// `--log-format json`: every stderr line of the CLI is one JSON object with time, level, source, msg and
// fields, lines written by others included; text stays as it was. Real child processes.

import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { tempDb, until } from "../helpers.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const children: ChildProcess[] = [];
afterEach(async () => {
  for (const c of children.splice(0)) {
    if (c.exitCode === null && c.signalCode === null) {
      const exited = new Promise((r) => c.once("exit", r));
      c.kill("SIGKILL");
      await exited;
    }
  }
});

function start(args: string[]) {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: ROOT,
    stdio: ["ignore", "pipe", "pipe"],
  });
  children.push(child);
  const out = { stderr: "", stdout: "" };
  child.stderr!.on("data", (d) => (out.stderr += d));
  child.stdout!.on("data", (d) => (out.stdout += d));
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, out, exited };
}

interface Line {
  time: string;
  level: string;
  source: string;
  msg: string;
  [field: string]: unknown;
}

/** Every stderr line parsed as JSON (a line that is not JSON fails the test). */
function lines(stderr: string): Line[] {
  return stderr
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => {
      const parsed = JSON.parse(l) as Line;
      expect(new Date(parsed.time).toISOString()).toBe(parsed.time);
      expect(["debug", "info", "warn", "error"]).toContain(parsed.level);
      return parsed;
    });
}

describe("--log-format", () => {
  it("json: waymark mcp logs one object a line, and /metrics answers", async () => {
    const db = tempDb();
    const cli = start([
      "src/cli/main.ts",
      "mcp",
      "--http",
      "0",
      "--db",
      db,
      "--create",
      "--log-format",
      "json",
    ]);
    const url = await until(
      () =>
        lines(cli.out.stderr)
          .find((l) => l.msg.startsWith("listening on"))
          ?.msg.split(" ")[2],
      "the listening line",
      30_000,
    );
    const metrics = await fetch(url.replace(/\/mcp$/, "/metrics"));
    expect(metrics.status).toBe(200);
    expect(await metrics.text()).toContain("# TYPE waymark_runs gauge");
    cli.child.kill("SIGTERM");
    expect(await cli.exited).toBe(0);
    const all = lines(cli.out.stderr);
    expect(all.map((l) => [l.level, l.source])).toContainEqual(["info", "waymark mcp"]);
    expect(all.at(-1)).toMatchObject({ level: "info", source: "waymark mcp", msg: "stopped" });
    expect(all.some((l) => l.msg.startsWith("Prometheus metrics at http://127.0.0.1:"))).toBe(true);
    expect(cli.out.stdout).toBe("");
  });

  it("json: a usage error is an error object; an unknown format is refused; text is unchanged", async () => {
    const bad = start(["src/cli/main.ts", "--log-format=json", "mcp", "--bogus"]);
    expect(await bad.exited).toBe(2);
    const [error] = lines(bad.out.stderr);
    expect(error).toMatchObject({ level: "error", source: "waymark mcp" });
    expect(error!.msg).toMatch(/^Unknown option "--bogus"\.\n\nUsage: waymark mcp/);

    const yaml = start(["src/cli/main.ts", "mcp", "--log-format", "yaml"]);
    expect(await yaml.exited).toBe(2);
    expect(yaml.out.stderr).toBe('waymark: --log-format takes text or json; got "yaml".\n');

    const text = start(["src/cli/main.ts", "--log-format", "text", "mcp", "--bogus"]);
    expect(await text.exited).toBe(2);
    expect(text.out.stderr).toMatch(/^waymark mcp: Unknown option "--bogus"\.\n\nUsage:/);
  });

  it.each([
    ["diagnose", ["x/y", "--db", "no-such-file.db"], 1, /^there is no database at no-such-file\.db\./],
    ["diagnose", ["--bogus"], 2, /^Unknown option '--bogus'/],
    ["check", ["--bogus"], 2, /--bogus/],
    ["init", ["--bogus"], 2, /--bogus/],
    ["demo", ["--port", "x"], 2, /^--port takes a port number/],
    ["schedules", ["--bogus"], 2, /--bogus/],
  ])("json: waymark %s %j writes its error as one object of level error", async (verb, args, code, msg) => {
    const cli = start(["src/cli/main.ts", verb, ...args, "--log-format", "json"]);
    expect(await cli.exited).toBe(code);
    const all = lines(cli.out.stderr);
    expect(all).toHaveLength(1);
    expect(all[0]).toMatchObject({ level: "error", source: `waymark ${verb}` });
    expect(all[0]!.msg).toMatch(msg);
  });

  it.each([
    ["ends", ""],
    ["calls process.exit", "process.exit(3);"],
  ])("json: a last stderr write without a newline is logged when the process %s", async (_, end) => {
    const script = `import("./src/log.ts").then((m) => {
      m.setLogFormat("json");
      process.stderr.write("last words, no newline");
      ${end}
    });`;
    const child = start(["--input-type=module", "-e", script]);
    expect(await child.exited).toBe(end ? 3 : 0);
    expect(lines(child.out.stderr).map(({ time: _, ...rest }) => rest)).toEqual([
      { level: "info", source: "stderr", msg: "last words, no newline" },
    ]);
  });

  it("json: lines others write to stderr become objects too, and fields sit beside msg", async () => {
    const script = `import("./src/log.ts").then((m) => {
      m.setLogFormat("json");
      console.error("from the app\\nsecond line");
      process.stderr.write("no newline yet");
      process.stderr.write(" ... now\\n");
      m.log("warn", "waymark", "careful", { code: "X", runIds: [1, 2] });
    });`;
    const child = start(["--input-type=module", "-e", script]);
    expect(await child.exited).toBe(0);
    expect(lines(child.out.stderr).map(({ time: _, ...rest }) => rest)).toEqual([
      { level: "info", source: "stderr", msg: "from the app" },
      { level: "info", source: "stderr", msg: "second line" },
      { level: "info", source: "stderr", msg: "no newline yet ... now" },
      { level: "warn", source: "waymark", msg: "careful", code: "X", runIds: [1, 2] },
    ]);
  });
});
