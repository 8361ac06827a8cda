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

/** A running background checkpointer; `stop()` runs a last checkpoint and ends the thread. */
export interface Checkpointer {
  stop(): Promise<void>;
}

export function startCheckpointer(path: string, limit: number, intervalMs = 100): Checkpointer {
  const workerData = { module: sqliteModule(), addon: sqliteAddon() ?? null, path, intervalMs, limit };
  const worker = new Worker(WORKER, { eval: true, workerData });
  worker.unref();
  worker.on("error", (err) => {
    log("warn", "waymark", `the WAL checkpointer stopped (${err.message}); checkpoints happen at close.`);
  });
  return {
    stop: () =>
      new Promise<void>((resolve) => {
        const timeout = setTimeout(() => void worker.terminate().then(() => resolve()), 2000);
        worker.once("exit", () => {
          clearTimeout(timeout);
          resolve();
        });
        worker.postMessage("stop");
      }),
  };
}
