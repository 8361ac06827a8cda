// Where better-sqlite3's compiled addon is. Without `nativeBinding`, a process's first open has the `bindings`
// package look for it: a resolve and a stat for each of a dozen candidate paths (about 1 ms of a resume's
// 2.4 ms to open its first database, measured; more under a resolve hook such as tsx's).

import fs from "node:fs";
import { createRequire } from "node:module";
import nodePath from "node:path";

let main: string | undefined;
let addon: string | null | undefined;

/** The path of better-sqlite3's entry module (what the checkpointer's worker requires). */
export function sqliteModule(): string {
  main ??= createRequire(import.meta.url).resolve("better-sqlite3");
  return main;
}

/** The addon in the package's build/Release, or undefined (then better-sqlite3 looks for it itself). */
export function sqliteAddon(): string | undefined {
  if (addon === undefined) {
    try {
      const file = nodePath.join(
        nodePath.dirname(sqliteModule()),
        "..",
        "build",
        "Release",
        "better_sqlite3.node",
      );
      addon = fs.existsSync(file) ? file : null;
    } catch {
      addon = null;
    }
  }
  return addon ?? undefined;
}
