// `--db` checked before anything opens it: `waymark mcp` never creates a database silently, since a
// wrong path would otherwise serve an empty database that shows none of the application's runs.

import fs from "node:fs";
import path from "node:path";
import { DEFAULT_DATABASE } from "../storage/open.js";
import { isPostgresUrl } from "../storage/postgres/url.js";
import { missingFolder } from "../storage/sqlite/errors.js";

/** What --db asks for: the value, whether it was given, and whether a missing file may be created. */
export interface DatabaseArg {
  db: string;
  dbGiven: boolean;
  create: boolean;
  /** A read-only server never creates a database: the file must exist. */
  readOnly: boolean;
  /** The command that opens the database, when not the server (e.g. "waymark prune deletes from"). */
  command?: string;
}

const WHICH =
  "Point --db at the file your application writes (the database its registry.start({ database }) opens)";

/** Why the server must not open `--db` as asked, or null when it may (the file exists, or --create). */
export function databaseProblem(arg: DatabaseArg): string | null {
  const { db } = arg;
  if (db === ":memory:" || isPostgresUrl(db)) return null;
  const file = path.resolve(db);
  if (fs.existsSync(file)) {
    return fs.statSync(file).isDirectory()
      ? `--db ${db}: ${file} is a folder, not a database file. ${WHICH}.`
      : null;
  }
  const folder = missingFolder(db);
  if (arg.create) {
    return folder
      ? `--db ${db}: its folder ${folder} does not exist, so there is nowhere to create the database. Create the folder (mkdir -p "${folder}"), or fix the path.`
      : null;
  }
  const looked = arg.dbGiven
    ? `There is no database at ${file} (--db ${db})`
    : `No --db was given and there is no ${DEFAULT_DATABASE} here (looked for ${file})`;
  const relative = path.isAbsolute(db)
    ? ""
    : `; a relative path is taken from the folder the server starts in, ${process.cwd()}`;
  if (arg.command)
    return `${looked}: ${arg.command} an existing database and creates none. ${WHICH}${relative}.`;
  if (arg.readOnly) {
    return `${looked}, and a read-only server creates none. ${WHICH}${relative}.`;
  }
  return folder
    ? `${looked}, and its folder ${folder} does not exist either. ${WHICH}${relative}; or create the folder (mkdir -p "${folder}") and add --create to start an empty database there on purpose.`
    : `${looked}. ${WHICH}${relative}; or add --create to start an empty database there on purpose.`;
}
