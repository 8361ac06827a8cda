// The app: starts the engine on its own database, runs one order to the end, and closes the engine so
// the process exits.

import { registry } from "./workflows.js";

const engine = await registry.start({ database: "./app.db" });
const run = await engine.getOrCreate("order", "order-1", { sku: "mug", quantity: 2 });
await run.send("payments", { by: "ann", amount: 24 });
const result = await run.result();
console.log(JSON.stringify({ status: (await run.info()).status, result }));
await engine.close();
