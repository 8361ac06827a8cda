// `waymark check --db <file> --registry <module>`: the deploy check for CI. Replays every unfinished run's
// history against the code the module registers, executing no step and writing nothing (SQLite is opened
// read-only), and lists each run that would fail when it runs again, with the first differing entry and the
// fix. Exit 0 when every run matches, 1 when something would break, 2 on bad usage.

import fs from "node:fs";
import { parseArgs } from "node:util";
import { divergence } from "../divergence.js";
import { systemClock } from "../engine/clock.js";
import { checkUnfinishedRuns, type DriftFinding, type DriftReport } from "../engine/drift-check.js";
import { DEFAULT_DATABASE, openStore } from "../storage/open.js";
import { isPostgresUrl } from "../storage/postgres/url.js";
import { openSqliteStore } from "../storage/sqlite/sqlite-store.js";
import { loadRegistry, RegistrySideEffectsError } from "./load-registry.js";
import { verbError } from "./verb-error.js";

const USAGE = `Usage: waymark check --registry <module> [--allow-handles] [--db <file>] [--json]

Before a deploy: replays the history of every unfinished run (pending, running, sleeping, waiting,
retrying) against the code the registry module now registers, without running a step or writing
anything, and lists each run that would fail when it runs again, with the first differing entry and
the fix. Exit code 0 when every run matches, 1 when some would fail, 2 on bad usage.

  --registry <module>  the module exporting the registry (setup({ use })); TypeScript is loaded directly.
                       It must only define and export it: one that starts an engine, servers or timers at
                       import is refused
  --allow-handles      accept a module that leaves handles open at import (never one that starts an engine)
  --db <file|url>      SQLite database file (default ${DEFAULT_DATABASE}), opened read-only, or postgres:// URL
  --json               print the report as JSON
  -h, --help           show this help
`;

interface Output {
  write(text: string): unknown;
}

/** Where the first difference is, in words. */
function where(f: DriftFinding): string {
  const e = f.entry;
  if (!e) return `version ${f.version} is not registered`;
  const scope = e.scope === "" ? "the root scope" : `scope "${e.scope}"`;
  return `entry #${e.position} of ${scope}: ${divergence(e.recorded, e.requested)}`;
}

/** The report as a person reads it in a terminal or a CI log. */
export function checkReport(report: DriftReport, db: string, module: string): string {
  const lines = [
    `waymark check: ${report.checked} unfinished run${report.checked === 1 ? "" : "s"} in ${db} replayed against ${module}.`,
  ];
  for (const f of report.findings) {
    lines.push("", `FAIL ${f.run} (${f.status}, version ${f.version}): ${where(f)}`, `  ${f.message}`);
  }
  if (report.unfinished.length) {
    lines.push(
      "",
      `Not known: ${report.unfinished.join(", ")}: the code awaited something of its own (a timer, I/O) for over 3 s before reaching its history.`,
    );
  }
  for (const u of report.unregistered) {
    lines.push(
      "",
      `Not checked: ${u.count} unfinished run${u.count === 1 ? "" : "s"} of workflow "${u.workflow}", which ${module} does not register: a process running this registry leaves ${u.count === 1 ? "it" : "them"} alone (another application's, or a workflow removed too early).`,
    );
  }
  lines.push(
    "",
    report.findings.length
      ? `${report.findings.length} run${report.findings.length === 1 ? "" : "s"} would fail when ${report.findings.length === 1 ? "it runs" : "they run"} again. Fix the code as said above before deploying.`
      : "Every unfinished run matches the registered code.",
  );
  return `${lines.join("\n")}\n`;
}

/** `waymark check ...`; resolves the exit code. */
export async function run(
  args: string[],
  io: { out: Output; err: Output } = { out: process.stdout, err: process.stderr },
): Promise<number> {
  const usage = (why: string) => {
    verbError(io.err, "check", `${why}\n\n${USAGE}`);
    return 2;
  };
  let values: {
    db?: string | undefined;
    registry?: string | undefined;
    "allow-handles"?: boolean | undefined;
    json?: boolean | undefined;
    help?: boolean | undefined;
  };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        db: { type: "string" },
        registry: { type: "string" },
        "allow-handles": { type: "boolean" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    io.out.write(USAGE);
    return 0;
  }
  if (!values.registry)
    return usage("--registry <module> is required: the module that registers the code to deploy.");
  const db = values.db ?? DEFAULT_DATABASE;
  const postgres = isPostgresUrl(db);
  if (!postgres && !fs.existsSync(db)) {
    return usage(`there is no database at ${db}. Pass the file your application writes with --db.`);
  }
  let registry: Awaited<ReturnType<typeof loadRegistry>>;
  try {
    registry = await loadRegistry(values.registry, { allowHandles: values["allow-handles"] ?? false });
  } catch (err) {
    if (err instanceof RegistrySideEffectsError) {
      // What the module started (servers, timers) would keep this process alive: one line, and leave.
      verbError(io.err, "check", err.message);
      process.exit(2);
    }
    return usage(err instanceof Error ? err.message : String(err));
  }
  const store = postgres ? await openStore(db) : openSqliteStore(db, { readonly: true });
  try {
    const report = await checkUnfinishedRuns(store, registry.definitions, { clock: systemClock });
    io.out.write(
      values.json ? `${JSON.stringify(report, null, 2)}\n` : checkReport(report, db, values.registry),
    );
    return report.findings.length ? 1 : 0;
  } finally {
    await store.close();
  }
}
