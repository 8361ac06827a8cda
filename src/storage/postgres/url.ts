// Whether a database string is a PostgreSQL URL, apart from connect.ts so that telling SQLite from
// PostgreSQL does not load node-postgres (the CLI and openStore load it only for a PostgreSQL URL).

/** True for a string Waymark treats as a PostgreSQL URL. */
export function isPostgresUrl(value: string): boolean {
  return /^postgres(ql)?:\/\//i.test(value);
}
