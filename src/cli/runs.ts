// `waymark runs [--workflow w] [--status s]... [--tag name=value]... [--limit n] [--json]`: the runs of a
// database for a person in a terminal, newest first, filtered like list_runs (tags exact and ANDed, from
// their index). Attaches to the database like `waymark diagnose`: reads, writes nothing, runs nothing.

import { parseArgs } from "node:util";
import { iso } from "../format.js";
import { attach, DEFAULT_DATABASE } from "../index.js";
import { RUN_STATUSES, type RunStatus } from "../storage/store.js";
import { databaseProblem } from "./database-arg.js";
import { parseTagFlags } from "./tag-args.js";
import { verbError } from "./verb-error.js";

const USAGE = `Usage: waymark runs [--workflow <name>] [--status <status>]... [--tag <name=value>]... [--limit <n>]
                   [--db <file or postgres URL>] [--json]

Lists the runs stored in the database, newest first: workflow/key, status, version, creation time, tags,
and what a run waits for or why it failed.

  --workflow <name>      only runs of this workflow
  --status <status>      only runs in this status (repeatable): ${RUN_STATUSES.join(", ")}
  --tag <name=value>     only runs holding this tag with exactly this value (repeatable: all must hold)
  --limit <n>            at most n runs (1-1000, default 50)
  --db <file>            SQLite database file or PostgreSQL URL (default ${DEFAULT_DATABASE})
  --json                 print JSON instead of text
  -h, --help             show this help
`;

interface Output {
  write(text: string): unknown;
}

/** `waymark runs ...`; resolves the exit code (0 listed, 1 no database or a refused filter, 2 bad usage). */
export async function run(
  args: string[],
  io: { out: Output; err: Output } = { out: process.stdout, err: process.stderr },
): Promise<number> {
  const usage = (why: string) => {
    verbError(io.err, "runs", `${why}\n\n${USAGE}`);
    return 2;
  };
  let values: Record<string, string | boolean | string[] | undefined>;
  try {
    ({ values } = parseArgs({
      args,
      options: {
        workflow: { type: "string" },
        status: { type: "string", multiple: true },
        tag: { type: "string", multiple: true },
        limit: { type: "string" },
        db: { type: "string" },
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
  const statuses = (values.status as string[] | undefined) ?? [];
  const bad = statuses.find((s) => !(RUN_STATUSES as readonly string[]).includes(s));
  if (bad !== undefined) return usage(`--status ${bad}: statuses are ${RUN_STATUSES.join(", ")}.`);
  const tagged = parseTagFlags(values.tag as string[] | undefined);
  if (!tagged.ok) return usage(tagged.problem);
  const limitText = values.limit as string | undefined;
  const limit = limitText === undefined ? 50 : Number(limitText);
  if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
    return usage(`--limit ${limitText}: give a whole number from 1 to 1000.`);
  const database = (values.db as string | undefined) ?? DEFAULT_DATABASE;
  const problem = databaseProblem({
    db: database,
    dbGiven: values.db !== undefined,
    create: false,
    readOnly: true,
  });
  if (problem) {
    verbError(io.err, "runs", problem);
    return 1;
  }
  const engine = await attach({ database });
  try {
    const page = await engine.listRuns({
      ...(typeof values.workflow === "string" ? { workflow: values.workflow } : {}),
      ...(statuses.length ? { status: statuses as RunStatus[] } : {}),
      ...(tagged.tags ? { tags: tagged.tags } : {}),
      limit,
    });
    if (values.json) {
      io.out.write(`${JSON.stringify({ runs: page.runs, more: page.nextCursor !== null }, null, 2)}\n`);
      return 0;
    }
    if (page.runs.length === 0) io.out.write("No runs match.\n");
    for (const r of page.runs) {
      const tags = Object.entries(r.tags ?? {})
        .map(([n, v]) => `${n}=${v}`)
        .join(", ");
      const why = r.error ? ` — ${r.error.message.split("\n")[0]!.slice(0, 200)}` : "";
      io.out.write(
        `${r.workflow}/${r.key} [${r.status}] v${r.version}, created ${iso(r.createdAt)}${tags ? ` {${tags}}` : ""}${why}\n`,
      );
    }
    if (page.nextCursor !== null) io.out.write(`(more runs: raise --limit or narrow the filters)\n`);
    return 0;
  } catch (err) {
    verbError(io.err, "runs", err instanceof Error ? err.message : String(err));
    return 1;
  } finally {
    await engine.close();
  }
}
