// `waymark schedules [list | pause <name> | resume <name>]`: the schedules of a database for a person in a
// terminal (next due, paused or orphaned, the last firing and its run's status), and pausing or resuming one.
// Opens the database without running anything; the process that runs the workflows obeys a pause at once.

import { parseArgs } from "node:util";
import type { ScheduleInfo } from "../engine/schedules.js";
import { attach, DEFAULT_DATABASE } from "../index.js";
import { scheduleLine } from "../mcp/tools/schedule-view.js";
import { cliClient } from "./audit-client.js";
import { databaseProblem } from "./database-arg.js";
import { verbError } from "./verb-error.js";

const USAGE = `Usage: waymark schedules [list] [--db <file or postgres URL>] [--json]
       waymark schedules pause <name> [--db <file or postgres URL>]
       waymark schedules resume <name> [--db <file or postgres URL>]

Lists the schedules of setup({ schedules }) stored in the database: when each fires next, whether it is
paused or orphaned (removed from the code), and its latest firing with the run it started. pause stops a
schedule firing in every process sharing the database; resume lets it fire again from its next due time.

  --db <file>   SQLite database file or PostgreSQL URL (default ${DEFAULT_DATABASE})
  --json        print JSON instead of text
  -h, --help    show this help
`;

interface Output {
  write(text: string): unknown;
}

/** `waymark schedules ...`; resolves the exit code (0 done, 1 no such schedule or database, 2 bad usage). */
export async function run(
  args: string[],
  io: { out: Output; err: Output } = { out: process.stdout, err: process.stderr },
): Promise<number> {
  const usage = (why: string) => {
    verbError(io.err, "schedules", `${why}\n\n${USAGE}`);
    return 2;
  };
  let values: { db?: string | undefined; json?: boolean | undefined; help?: boolean | undefined };
  let positionals: string[];
  try {
    ({ values, positionals } = parseArgs({
      args,
      options: { db: { type: "string" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } },
      allowPositionals: true,
      strict: true,
    }));
  } catch (err) {
    return usage(err instanceof Error ? err.message : String(err));
  }
  if (values.help) {
    io.out.write(USAGE);
    return 0;
  }
  const [action = "list", name, ...extra] = positionals;
  if (action !== "list" && action !== "pause" && action !== "resume")
    return usage(`unknown subcommand "${action}"; use list, pause <name> or resume <name>.`);
  if (action === "list" ? name !== undefined : name === undefined || extra.length > 0)
    return usage(action === "list" ? "list takes no name." : `${action} takes one schedule name.`);
  const database = values.db ?? DEFAULT_DATABASE;
  const problem = databaseProblem({
    db: database,
    dbGiven: values.db !== undefined,
    create: false,
    readOnly: true,
  });
  if (problem) {
    verbError(io.err, "schedules", problem);
    return 1;
  }
  const engine = await attach({ database });
  try {
    let shown: ScheduleInfo[];
    if (action === "list") shown = await engine.schedules.list();
    else {
      try {
        const write = {
          surface: "cli" as const,
          client: cliClient("schedules"),
          action: `${action}_schedule`,
          args: { name },
        };
        shown = [await engine.audit.around(write, () => engine.schedules[action](name!))];
      } catch (err) {
        if ((err as { code?: string }).code !== "SCHEDULE_NOT_FOUND") throw err;
        verbError(io.err, "schedules", (err as Error).message);
        return 1;
      }
    }
    if (values.json) io.out.write(`${JSON.stringify(action === "list" ? shown : shown[0], null, 2)}\n`);
    else if (action !== "list")
      io.out.write(`Schedule ${name} ${action}d.\n${shown.map(scheduleLine).join("\n")}\n`);
    else
      io.out.write(
        shown.length
          ? `${shown.map(scheduleLine).join("\n")}\n`
          : `${engine.database()} has no schedules (declare them in setup({ use, schedules })).\n`,
      );
    return 0;
  } finally {
    await engine.close();
  }
}
