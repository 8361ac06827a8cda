// One engine incarnation of the torture run: creates its batch of runs, resumes everything unfinished,
// and may be killed at any moment (by the parent, inside a step, or inside a commit).
// argv: <db> <ledger> <gen> <seed> <perWorkflow> <killInStep> <killInCommit>

import { openStore } from "../../src/index.js";
import type { SqliteStore } from "../../src/storage/sqlite/sqlite-store.js";
import { prng, runsOf, tortureRegistry, useLedger } from "./workload.js";

const [db, ledgerFile, genArg, seedArg, perArg, stepArg, commitArg] = process.argv.slice(2) as string[];
const gen = Number(genArg);
const random = prng(Number(seedArg) * 1000 + gen);
useLedger({ file: ledgerFile!, gen, killInStep: Number(stepArg), random });

const store = (await openStore(db)) as SqliteStore;
const killInCommit = Number(commitArg);
if (killInCommit > 0) {
  // Kill inside a commit: after every statement of the batch ran, before COMMIT.
  const target = store.writer;
  const apply = target.apply.bind(target);
  target.apply = (batch) => {
    const result = apply(batch);
    if (random() < killInCommit) process.kill(process.pid, "SIGKILL");
    return result;
  };
}

const engine = await tortureRegistry.start({ database: store, leaseMs: 2000 });
for (const r of runsOf(gen, Number(perArg))) await engine.getOrCreate(r.workflow as "chain", r.key);
process.stdout.write("ready\n");
// Done when no run is unfinished (inbox runs need the feeder's messages).
for (;;) {
  const open = await engine.listRuns({
    status: ["pending", "running", "sleeping", "waiting", "retrying"],
    limit: 1,
  });
  if (open.runs.length === 0) break;
  await new Promise((r) => setTimeout(r, 20));
}
await engine.close();
process.stdout.write("done\n");
