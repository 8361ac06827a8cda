// `waymark migrate`: copies a SQLite database into PostgreSQL, for when one machine is no longer enough.
//
//   waymark migrate --from app.db --to postgres://user:password@host:5432/database[?schema=name]

import { type LogLevel, log } from "../log.js";
import { copySqliteToPostgres } from "../storage/postgres/import-sqlite.js";
import { isPostgresUrl } from "../storage/postgres/url.js";

const HELP = `Usage: waymark migrate --from <file.db> --to <postgres://user:password@host:5432/database[?schema=name]>

Copies every run, history entry, tag, message, request, refused message and published workflow from a SQLite
database into a PostgreSQL database, in one transaction: all of it lands, or nothing does. Ids keep their
order and JSON is copied as is. The target schema is created if missing; a target that already holds runs
with the same workflow and key is refused.

Stop the application first (a running engine holds leases, and the copy is refused), migrate, then start
the engines with the PostgreSQL URL as their database. The SQLite file is only read.
`;

function say(line: string, level: LogLevel = "error"): void {
  log(level, "waymark migrate", line);
}

export async function run(args: string[]): Promise<number> {
  let from: string | undefined;
  let to: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--help" || a === "-h") {
      process.stdout.write(HELP);
      return 0;
    }
    if (a !== "--from" && a !== "--to") {
      say(`unknown option "${a}".\n\n${HELP}`);
      return 2;
    }
    const v = args[i + 1];
    if (v === undefined || v.startsWith("--")) {
      say(`${a} needs a value.\n\n${HELP}`);
      return 2;
    }
    if (a === "--from") from = v;
    else to = v;
    i++;
  }
  if (!from || !to) {
    say(`pass both --from (the SQLite file) and --to (the PostgreSQL URL).\n\n${HELP}`);
    return 2;
  }
  if (!isPostgresUrl(to)) {
    say(`--to takes a PostgreSQL URL (postgres://user:password@host:5432/database); got "${to}".`);
    return 2;
  }
  try {
    const r = await copySqliteToPostgres(from, to);
    const shown = new URL(to);
    shown.password = "";
    say(
      `copied ${r.runs} runs, ${r.entries} history entries, ${r.tags} tags, ${r.messages} messages, ${r.requests} requests, ${r.rejections} refused messages, ${r.workflows} published workflow versions, ${r.schedules} schedules, ${r.audit} audit rows and ${r.plans} bulk plans from ${from} to ${shown}.${r.orphans ? ` Left behind ${r.orphans} rows that belonged to no run.` : ""}`,
      "info",
    );
    say(
      `start your engines with { database: "${shown}" } (and the password); ${from} was not changed.`,
      "info",
    );
    return 0;
  } catch (err) {
    say(err instanceof Error ? err.message : String(err));
    return 1;
  }
}
