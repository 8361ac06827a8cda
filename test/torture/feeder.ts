// The torture run's message feeder: a separate process attached to the database that sends every
// inbox run its messages (idempotency keys make resending safe), until killed.
// argv: <db>

import { attach } from "../../src/index.js";
import { INBOX_MESSAGES } from "./workload.js";

const [db] = process.argv.slice(2) as string[];
const engine = await attach({ database: db });
const fed = new Set<number>();
for (;;) {
  const page = await engine.listRuns({
    workflow: "inbox",
    status: ["pending", "running", "waiting"],
    limit: 200,
  });
  for (const run of page.runs) {
    if (fed.has(run.id)) continue;
    for (let i = 0; i < INBOX_MESSAGES; i++) {
      await engine.send(run.id, "in", { n: i + 1 }, { idempotencyKey: `${run.key}-${i}` });
    }
    fed.add(run.id);
  }
  await new Promise((r) => setTimeout(r, 25));
}
