// WAL checkpoints on a worker thread, so the engine's thread only ever appends to the WAL.
//
// The engine's connection turns automatic checkpoints off; this worker opens its own connection to the
// same file and runs a PASSIVE checkpoint every `intervalMs`. PASSIVE never blocks writers; once a
// checkpoint has copied every frame, the next write starts the WAL over. When writes never pause long enough
// for that, the WAL outgrows `limit` and a TRUNCATE checkpoint (which briefly waits for the writer) resets it.

import { Worker } from "node:worker_threads";
import { log } from "../../log.js";
import { sqliteAddon, sqliteModule } from "./addon.js";

const WORKER = `
const { workerData, parentPort } = require("node:worker_threads");
const Database = require(workerData.module);
const db = new Database(workerData.path, workerData.addon ? { nativeBinding: workerData.addon } : {});
db.pragma("busy_timeout = 1000");
db.pragma("journal_size_limit = " + workerData.limit);
const pageSize = db.pragma("page_size", { simple: true });
const tick = () => {
  try {
    const [r] = db.pragma("wal_checkpoint(PASSIVE)");
    // Writers that never pause leave no moment at which the WAL can start over: once it holds more than the
    // limit, a TRUNCATE checkpoint waits for the current writer, copies the rest and empties the file.
    if (r && r.log * pageSize > workerData.limit) db.pragma("wal_checkpoint(TRUNCATE)");
  } catch {}
};
const timer = setInterval(tick, workerData.intervalMs);
parentPort.on("message", () => { clearInterval(timer); tick(); db.close(); parentPort.close(); });
`;

/**
 * A background checkpointer. Its thread starts at the first `begin()` (the store calls it after its first
 * write): starting one costs about 1 ms on this thread and more on another at a moment when a resume has
 * every core busy, and until something is written there is nothing to checkpoint. `stop()` runs a last
 * checkpoint and ends the thread; stopped, `begin()` does nothing.
 */
export interface Checkpointer {
  begin(): void;
  /** True once the thread was started. */
  readonly running: boolean;
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, limit: number, intervalMs = 100): Checkpointer {
  let worker: Worker | null = null;
  let stopped = false;
  const spawn = (): Worker => {
    const workerData = { module: sqliteModule(), addon: sqliteAddon() ?? null, path, intervalMs, limit };
    const w = new Worker(WORKER, { eval: true, workerData });
    w.unref();
    w.on("error", (err) => {
      log("warn", "waymark", `the WAL checkpointer stopped (${err.message}); checkpoints happen at close.`);
    });
    return w;
  };
  return {
    begin() {
      if (!worker && !stopped) worker = spawn();
    },
    get running() {
      return worker !== null;
    },
    stop: () => {
      stopped = true;
      const w = worker;
      if (!w) return Promise.resolve();
      return new Promise<void>((resolve) => {
        const timeout = setTimeout(() => void w.terminate().then(() => resolve()), 2000);
        w.once("exit", () => {
          clearTimeout(timeout);
          resolve();
        });
        w.postMessage("stop");
      });
    },
  };
}
