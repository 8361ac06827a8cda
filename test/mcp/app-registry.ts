// A registry module written as the README's app file is: it exports the registry and also starts an engine
// and a run when imported. `waymark mcp --registry` must refuse it rather than run that second engine.

import { setup, workflow } from "../../src/index.js";

export const greet = workflow({
  run: async (ctx) => ctx.step("say", () => `hello ${ctx.key}`),
});

export const registry = setup({ use: { greet } });
const engine = await registry.start({ database: ":memory:" });
await engine.getOrCreate("greet", "at-import");
