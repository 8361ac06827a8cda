// The SQLite file's size under churn: files use auto_vacuum = INCREMENTAL, so pages freed by pruned runs can go
// back to the file system; a slack of free pages stays for new rows to reuse (cheaper than shrink and regrow).

import type Database from "better-sqlite3";
import { log } from "../../log.js";

/** Most free pages handed back per call (4,096 pages of 4 KiB: 16 MiB), so one call stays short. */
const MAX_VACUUM_PAGES = 4096;
/** Free pages kept for new rows to reuse: a tenth of the file, at least this many. */
const MIN_SLACK_PAGES = 256;

/** Largest file converted at open: VACUUM rewrites it whole (about 13 s per GiB measured) and needs its size free. */
const MAX_CONVERT_BYTES = 1024 ** 3;

/**
 * A file made before auto_vacuum was set (by an older Waymark) is rewritten once with VACUUM, which is what
 * turns it on: about 1.3 s per 100 MB here (see README). A larger file than MAX_CONVERT_BYTES, or one another
 * process holds locked, is left as it is with a warning (its freed pages are still reused, the file just does
 * not shrink).
 */
export function convertToIncrementalVacuum(
  db: Database.Database,
  path: string,
  maxBytes = MAX_CONVERT_BYTES,
): void {
  if ((db.pragma("auto_vacuum", { simple: true }) as number) !== 0) return;
  const bytes =
    (db.pragma("page_count", { simple: true }) as number) *
    (db.pragma("page_size", { simple: true }) as number);
  if (bytes > maxBytes) {
    log(
      "warn",
      "waymark",
      `${path} (${Math.round(bytes / 1024 ** 2)} MB) was made without auto_vacuum: space freed by pruned runs is reused but the file does not shrink. To turn it on, stop the processes using it and run: sqlite3 "${path}" "PRAGMA auto_vacuum = INCREMENTAL; VACUUM;" (about 13 s per GB, and as much free disk as the file).`,
    );
    return;
  }
  const started = Date.now();
  try {
    db.pragma("auto_vacuum = INCREMENTAL");
    db.exec("VACUUM");
  } catch (err) {
    log(
      "warn",
      "waymark",
      `${path}: could not turn on incremental vacuum (${(err as Error).message}); pruned runs' space is reused but the file does not shrink. It is tried again at the next open.`,
    );
    return;
  }
  const ms = Date.now() - started;
  if (ms >= 1000) log("info", "waymark", `${path}: turned on incremental vacuum (one VACUUM, ${ms} ms).`);
}

/** Hands free pages beyond the slack back to the file system (a no-op without auto_vacuum). */
export function reclaimFreePages(db: Database.Database): void {
  const free = db.pragma("freelist_count", { simple: true }) as number;
  const pages = db.pragma("page_count", { simple: true }) as number;
  const excess = free - Math.max(MIN_SLACK_PAGES, Math.floor(pages / 10));
  if (excess > 0) db.pragma(`incremental_vacuum(${Math.min(excess, MAX_VACUUM_PAGES)})`);
}
