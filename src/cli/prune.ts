// `waymark prune --older-than 30d [--status failed] [--workflow name] [--dry-run]`: retention by hand. Deletes
// finished runs older than the given age with all their rows, a batch at a time (no long lock), whatever the
// workflows' own retention; a dry run counts them by workflow and status. Opens the database without running anything.

import { parseArgs } from "node:util";
import { toMs } from "../engine/duration.js";
import { RETENTION_STATUSES, type RetentionStatus } from "../engine/retention.js";
import { attach, DEFAULT_DATABASE, type PruneResult } from "../index.js";
import { cliClient } from "./audit-client.js";
import { databaseProblem } from "./database-arg.js";
import { verbError } from "./verb-error.js";

const USAGE = `Usage: waymark prune --older-than <duration> [--status <status>]... [--workflow <name>]...
                     [--dry-run] [--db <file or postgres URL>] [--json]

Deletes finished runs (completed, failed, cancelled) that finished longer ago than --older-than, with their
history, messages, requests and refused messages, 100 runs per transaction. A run whose parent is still
unfinished, and a run with a pending replay or cancel request, is kept. Runs are kept forever unless pruned
(here, or by workflow({ retention }) / registry.start({ retention }) in the process that runs them).

  --older-than <d>   age since the run finished: "30d", "12h", "90m", "2w" or milliseconds (required)
  --status <s>       only runs that ended so: completed, failed or cancelled (repeatable; default all three)
  --workflow <name>  only runs of this workflow (repeatable; default every workflow)
  --dry-run          count what would be deleted, by workflow and status; delete nothing
  --db <file>        SQLite database file or PostgreSQL URL (default ${DEFAULT_DATABASE})
  --json             print JSON instead of text
  -h, --help         show this help

Exit codes: 0 done (also when nothing was old enough), 1 no such database or a database error, 2 bad usage.
`;

interface Output {
  write(text: string): unknown;
}

/** `waymark prune ...`; resolves the exit code (0 done, 1 no such database, 2 bad usage). */
export async function run(
  args: string[],
  io: { out: Output; err: Output } = { out: process.stdout, err: process.stderr },
): Promise<number> {
  const usage = (why: string) => {
    verbError(io.err, "prune", `${why}\n\n${USAGE}`);
    return 2;
  };
  let values: {
    "older-than"?: string | undefined;
    status?: string[] | undefined;
    workflow?: string[] | undefined;
    "dry-run"?: boolean | undefined;
    db?: string | undefined;
    json?: boolean | undefined;
    help?: boolean | undefined;
  };
  try {
    ({ values } = parseArgs({
      args,
      options: {
        "older-than": { type: "string" },
        status: { type: "string", multiple: true },
        workflow: { type: "string", multiple: true },
        "dry-run": { type: "boolean" },
        db: { type: "string" },
        json: { type: "boolean" },
        help: { type: "boolean", short: "h" },
      },
      allowPositionals: false,
      strict: true,
    }));
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    io.out.write(USAGE);
    return 0;
  }
  const olderThan = values["older-than"];
  if (olderThan === undefined) return usage("--older-than is required, e.g. --older-than 30d.");
  try {
    // Digits alone are milliseconds, as everywhere durations are taken.
    toMs(/^\d+$/.test(olderThan) ? Number(olderThan) : olderThan, "--older-than");
  } catch (err) {
    return usage((err as Error).message);
  }
  const bad = (values.status ?? []).find((s) => !(RETENTION_STATUSES as readonly string[]).includes(s));
  if (bad !== undefined)
    return usage(`--status ${bad}: only finished runs are pruned; use completed, failed or cancelled.`);
  const database = values.db ?? DEFAULT_DATABASE;
  const problem = databaseProblem({
    db: database,
    dbGiven: values.db !== undefined,
    create: false,
    readOnly: true,
    command: "waymark prune deletes from",
  });
  if (problem) {
    verbError(io.err, "prune", problem);
    return 1;
  }
  const engine = await attach({ database });
  try {
    if (values.workflow) {
      const present = (await engine.listWorkflows())
        .filter((w) => Object.values(w.runs).some((n) => n > 0))
        .map((w) => w.name);
      for (const name of values.workflow.filter((w) => !present.includes(w))) {
        io.err.write(
          `waymark prune: warning: no run of workflow "${name}" exists in ${engine.database()}; workflows with runs: ${present.join(", ") || "none"}.\n`,
        );
      }
    }
    const options = {
      olderThan: /^\d+$/.test(olderThan) ? Number(olderThan) : olderThan,
      ...(values.status ? { status: values.status as RetentionStatus[] } : {}),
      ...(values.workflow ? { workflows: values.workflow } : {}),
      dryRun: values["dry-run"] ?? false,
    };
    // A real prune deletes runs: it goes in the audit (which it never deletes); a dry run only reads.
    const result = options.dryRun
      ? await engine.prune(options)
      : await engine.audit.around(
          { surface: "cli", client: cliClient("prune"), action: "prune", args: options },
          () => engine.prune(options),
        );
    if (values.json) io.out.write(`${JSON.stringify(result, null, 2)}\n`);
    else io.out.write(describe(result, olderThan, engine.database()));
    return 0;
  } finally {
    await engine.close();
  }
}

/** The result for a person: a line per workflow and status, and what to do next after a dry run. */
function describe(result: PruneResult, olderThan: string, database: string): string {
  if (result.total === 0) return `No finished runs older than ${olderThan} to delete in ${database}.\n`;
  const runs = (n: number) => `${n.toLocaleString("en")} run${n === 1 ? "" : "s"}`;
  const width = Math.max(...result.runs.map((r) => r.workflow.length));
  const lines = result.runs.map((r) => `  ${r.workflow.padEnd(width)}  ${r.status.padEnd(9)}  ${r.count}`);
  const head = result.dryRun
    ? `Would delete ${runs(result.total)} finished more than ${olderThan} ago from ${database}:`
    : `Deleted ${runs(result.total)} finished more than ${olderThan} ago from ${database}:`;
  const tail = result.dryRun ? "Run it again without --dry-run to delete them.\n" : "";
  return `${head}\n${lines.join("\n")}\n${tail}`;
}
