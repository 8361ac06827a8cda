// A process that runs only the payment workflow (fixtures/workflows/order.ts) on a shared database:
// confirms payment <key> on its 3-D Secure queue, runs it to its end, prints its output and exits.
// argv: <database (file or URL)> <payment key>
import { payment } from "../../fixtures/workflows/order.js";
import { setup } from "../../src/index.js";

const [database, key] = process.argv.slice(2) as [string, string];
const engine = await setup({ use: { payment } }).start({ database, deployCheck: false });
const run = await engine.get("payment", key);
await run.send("confirm", { ok: true });
process.stdout.write(`${JSON.stringify(await run.result({ timeout: 30_000 }))}\n`);
await engine.close();
