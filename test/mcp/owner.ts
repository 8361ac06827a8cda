// An application process for the attach-mode tests: runs the test registry on a database until killed.
// Usage: node --import tsx test/mcp/owner.ts <db> [workflow key json-input]...

import type { Engine } from "../../src/engine/engine.js";
import { registry } from "./workflows.js";

const [db, ...starts] = process.argv.slice(2);
if (!db) {
  process.stderr.write("usage: owner.ts <db> [workflow key input]...\n");
  process.exit(2);
}
const engine = (await registry.start({ database: db })) as unknown as Engine;
for (let i = 0; i + 2 < starts.length; i += 3) {
  await engine.getOrCreate(starts[i]!, starts[i + 1]!, JSON.parse(starts[i + 2] ?? "null") ?? undefined);
}
process.stdout.write("ready\n");
const stop = () => {
  void engine.close().then(() => process.exit(0));
};
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
