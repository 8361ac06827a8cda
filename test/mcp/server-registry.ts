// A registry module that also opens a web server and a timer when imported: an application, not a registry.

import http from "node:http";
import { setup, workflow } from "../../src/index.js";

export const greet = workflow({
  run: async (ctx) => ctx.step("say", () => `hello ${ctx.key}`),
});

export const registry = setup({ use: { greet } });
http.createServer((_req, res) => res.end("app")).listen(0, "127.0.0.1");
setInterval(() => process.stderr.write("app heartbeat\n"), 60_000);
