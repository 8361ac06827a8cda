// `waymark mcp --http` binds its port before it imports the --registry module (so a port in use refuses before
// any file exists). A client that polls the port meanwhile, as one that retries does, opens connections the
// server accepted itself: they are not handles the module left open, and the server must start.

import { spawn } from "node:child_process";
import fs from "node:fs";
import http from "node:http";
import { createRequire } from "node:module";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { pathToFileURL } from "node:url";
import { afterEach, expect, test } from "vitest";
import { Closer, ROOT } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const MAIN = path.join(ROOT, "src/cli/main.ts");
const TSX = ["--import", pathToFileURL(createRequire(import.meta.url).resolve("tsx")).href];

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

test("a client connecting while the registry module loads is not blamed on the module: the server starts", {
  timeout: 60_000,
}, async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "waymark-race-"));
  closer.add(() => fs.rmSync(dir, { recursive: true, force: true }));
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [...TSX, MAIN, "mcp", "--http", `127.0.0.1:${port}`, "--create", "--db", path.join(dir, "app.db")].concat(
      ["--registry", "test/mcp/slow-registry.ts"],
    ),
    { cwd: ROOT, stdio: ["ignore", "ignore", "pipe"] },
  );
  closer.add(() => void child.kill("SIGKILL"));
  let stderr = "";
  child.stderr!.on("data", (d) => (stderr += d));
  const exited = new Promise<number | null>((resolve) => child.once("exit", resolve));
  let connected = 0;
  // Poll with connections held open (a keep-alive client), until the server says it listens or exits.
  const sockets: net.Socket[] = [];
  closer.add(() => {
    for (const s of sockets) s.destroy();
  });
  let early: number | string | undefined;
  for (let i = 0; i < 400 && !/listening on|leaves/.test(stderr) && child.exitCode === null; i++) {
    await new Promise<void>((resolve) => {
      const s = net.connect(port, "127.0.0.1", () => {
        connected++;
        sockets.push(s);
        resolve();
      });
      s.on("error", () => resolve());
    });
    if (connected > 0 && early === undefined) {
      early = await new Promise<number | string>((resolve) => {
        const req = http.get(`http://127.0.0.1:${port}/mcp`, (r) => {
          r.resume();
          resolve(r.statusCode ?? 0);
        });
        req.setTimeout(5000, () => {
          req.destroy();
          resolve("no answer in 5 s");
        });
        req.on("error", (err) => resolve(err.message));
      });
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  expect(connected, "connections made while the module loaded").toBeGreaterThan(0);
  expect(early, "a request made while the module loaded is told to retry, not left hanging").toBe(503);
  expect(stderr).not.toContain("leaves");
  expect(stderr).toContain("listening on");
  const res = await new Promise<number>((resolve, reject) =>
    http.get(`http://127.0.0.1:${port}/mcp`, (r) => resolve(r.statusCode ?? 0)).on("error", reject),
  );
  expect(res, "the server answers once started").toBeGreaterThan(0);
  child.kill("SIGTERM");
  await exited;
});
