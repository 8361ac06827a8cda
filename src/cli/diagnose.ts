// `waymark diagnose <workflow>/<key>`: why a run failed or is stuck, the evidence, and what to do next, for a
// person in a terminal. `--failures` lists what fails most. Opens the database without running anything.

import fs from "node:fs";
import { parseArgs } from "node:util";
import { type DiagnoseOptions, type Diagnosis, diagnosisReport } from "../diagnosis/index.js";
import { attach, DEFAULT_DATABASE } from "../index.js";
import { verbError } from "./verb-error.js";

const USAGE = `Usage: waymark diagnose <workflow>/<key> [--db <file>] [--json]
       waymark diagnose --failures [--since <ISO time>] [--workflow <name>] [--db <file>] [--json]

Explains why a run failed or is stuck: the category, the entry to blame, the evidence, runs failing the
same way, and what to do next (the changes a person must make, then the exact MCP tool calls).
With --failures, lists failed and retrying runs grouped by error signature, most frequent first.

  --db <file>        SQLite database file (default ${DEFAULT_DATABASE})
  --json             print JSON instead of text
  --failures         list failure signatures instead of diagnosing one run
  --since <time>     with --failures: since this ISO time (default: 7 days ago)
  --workflow <name>  with --failures: only this workflow
  -h, --help         show this help
`;

interface Output {
  write(text: string): unknown;
}

type Values = {
  db?: string | undefined;
  json?: boolean | undefined;
  failures?: boolean | undefined;
  since?: string | undefined;
  workflow?: string | undefined;
  help?: boolean | undefined;
};

/** `waymark diagnose ...`; resolves the exit code (0 done, 1 not found, 2 bad usage). */
export async function run(
  args: string[],
  io: { out: Output; err: Output } = { out: process.stdout, err: process.stderr },
  options: DiagnoseOptions = {},
): Promise<number> {
  let values: Values;
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      options: {
        db: { type: "string" },
        json: { type: "boolean" },
        failures: { type: "boolean" },
        since: { type: "string" },
        workflow: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: true,
      strict: true,
    }));
  } catch (err) {
    verbError(io.err, "diagnose", `${err instanceof Error ? err.message : String(err)}\n\n${USAGE}`);
    return 2;
  }
  if (values.help) {
    io.out.write(USAGE);
    return 0;
  }
  const usage = (why: string) => {
    verbError(io.err, "diagnose", `${why}\n\n${USAGE}`);
    return 2;
  };
  const target = positionals[0];
  if (values.failures ? positionals.length > 0 : positionals.length !== 1)
    return usage(values.failures ? "--failures takes no run." : "name one run as <workflow>/<key>.");
  const slash = target?.indexOf("/") ?? -1;
  if (!values.failures && (slash <= 0 || slash === target!.length - 1))
    return usage(`"${target}" is not <workflow>/<key> (e.g. invoiceActor/tax-outage).`);
  let since: number | undefined;
  if (values.since !== undefined) {
    since = Date.parse(values.since);
    if (!Number.isFinite(since)) return usage(`--since ${JSON.stringify(values.since)} is not an ISO time.`);
  }
  const database = values.db ?? DEFAULT_DATABASE;
  if (database !== ":memory:" && !fs.existsSync(database)) {
    verbError(
      io.err,
      "diagnose",
      `there is no database at ${database}. Pass the application's file with --db.`,
    );
    return 1;
  }

  const engine = await attach({ database });
  try {
    if (values.failures) {
      const list = await engine.listFailures({
        ...(since !== undefined ? { since } : {}),
        ...(values.workflow ? { workflow: values.workflow } : {}),
      });
      if (values.json) {
        io.out.write(`${JSON.stringify(list, null, 2)}\n`);
        return 0;
      }
      const lines = list.failures.map(
        (f) =>
          `  ${String(f.count).padStart(4)}×  ${f.workflow} at "${f.entry}": ${f.errorName}: ${f.pattern}\n         ${f.firstSeen} to ${f.lastSeen}; e.g. ${f.keys.slice(0, 3).join(", ")}  →  waymark diagnose ${f.workflow}/${f.keys[0]}`,
      );
      io.out.write(
        lines.length
          ? `Failures since ${list.since} (${list.scanned} failed or retrying runs):\n${lines.join("\n")}\n`
          : `No failed or retrying runs since ${list.since}.\n`,
      );
      return 0;
    }
    const workflow = target!.slice(0, slash);
    const key = target!.slice(slash + 1);
    let d: Diagnosis;
    try {
      d = await engine.diagnose({ workflow, key }, options);
    } catch (err) {
      if (
        (err as { code?: string }).code === "RUN_NOT_FOUND" ||
        (err as { code?: string }).code === "WORKFLOW_NOT_FOUND"
      ) {
        verbError(io.err, "diagnose", (err as Error).message);
        return 1;
      }
      throw err;
    }
    io.out.write(values.json ? `${JSON.stringify(d, null, 2)}\n` : diagnosisReport(d));
    return 0;
  } finally {
    await engine.close();
  }
}
