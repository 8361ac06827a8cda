// A registry module that starts an engine at load without awaiting it (a floating promise).

import { setup, workflow } from "../../src/index.js";

export const greet = workflow({
  run: async (ctx) => ctx.step("say", () => `hello ${ctx.key}`),
});

export const registry = setup({ use: { greet } });
void registry.start({ database: ":memory:" }).then((engine) => engine.getOrCreate("greet", "at-import"));
