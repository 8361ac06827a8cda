// The inspector's login session over real HTTP (and in a browser for the address bar): a random id of
// the server that issued it, with an expiry on the engine's clock, a cookie name per server, ended when
// the server stops; the ?token= leaves the URL by a redirect.

import { afterEach, expect, test } from "vitest";
import { FakeClock } from "../../src/engine/clock.js";
import type { Engine } from "../../src/engine/engine.js";
import { createInspector } from "../../src/inspector/index.js";
import { Sessions } from "../../src/inspector/sessions.js";
import { serveHttp } from "../../src/mcp/http.js";
import { createMcpServer } from "../../src/mcp/server.js";
import { launchBrowser } from "../browser.js";
import { Closer, startEngine, tempDb } from "../mcp/helpers.js";
import { registry } from "../mcp/workflows.js";
import { request, serveInspector } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const TOKEN = "s3cret-inspector-token";

/** Logs in with the token link; returns the cookie as `name=value` and the raw Set-Cookie header. */
async function login(base: string): Promise<{ cookie: string; setCookie: string; name: string; id: string }> {
  const res = await request(`${base}/?token=${TOKEN}`, { headers: { connection: "close" } });
  expect(res.status).toBe(303);
  const setCookie = String(res.headers["set-cookie"]);
  const cookie = setCookie.split(";")[0]!;
  const [name, id] = cookie.split("=") as [string, string];
  return { cookie, setCookie, name, id };
}

// No keep-alive: a test below stops a server and starts another on its port, which no pooled socket survives.
const runs = (base: string, cookie: string) =>
  request(`${base}/api/runs`, { headers: { cookie, connection: "close" } });

test("a login is a random session of the server that made it: another server with the same token refuses it, even under its own cookie name", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const a = await serveInspector(closer, engine, { http: { token: TOKEN } });
  const b = await serveInspector(closer, engine, { http: { token: TOKEN } });

  const first = await login(a.base);
  const second = await login(a.base);
  expect(first.id).not.toBe(second.id); // a fresh id per login, not a value derived from the token
  expect(first.id.length).toBeGreaterThanOrEqual(43); // 256 bits, base64url
  expect((await runs(a.base, first.cookie)).status).toBe(200);
  expect((await runs(a.base, second.cookie)).status).toBe(200);

  // Cookies ignore ports, so b receives a's cookie; it means nothing there, whatever its name.
  const onB = await login(b.base);
  expect(onB.name).not.toBe(first.name);
  expect(onB.name).toContain(String(b.port));
  expect((await runs(b.base, first.cookie)).status).toBe(401);
  expect((await runs(b.base, `${onB.name}=${first.id}`)).status).toBe(401);
  expect((await runs(b.base, onB.cookie)).status).toBe(200);
  // Both cookies sent together (as a browser does for 127.0.0.1): each server picks its own.
  const both = `${first.cookie}; ${onB.cookie}`;
  expect((await runs(a.base, both)).status).toBe(200);
  expect((await runs(b.base, both)).status).toBe(200);
});

test("a session expires: the cookie says Max-Age, and the server refuses it once its time has passed on the engine's clock", async () => {
  const clock = new FakeClock();
  const engine = (await registry.start({ database: tempDb(closer), clock })) as unknown as Engine;
  closer.add(() => engine.close());
  const server = await serveInspector(closer, engine, {
    http: { token: TOKEN },
    inspector: { sessionTtlMs: 60 * 60_000 },
  });

  const { cookie, setCookie } = await login(server.base);
  expect(setCookie).toContain("Max-Age=3600");
  expect(setCookie).toContain("HttpOnly");
  expect(setCookie).toContain("SameSite=Strict");
  expect((await runs(server.base, cookie)).status).toBe(200);
  clock.advance(60 * 60_000 - 1);
  expect((await runs(server.base, cookie)).status).toBe(200);
  clock.advance(1);
  const expired = await runs(server.base, cookie);
  expect(expired.status).toBe(401);
  expect(expired.json.error.code).toBe("UNAUTHORIZED");
  const page = await request(`${server.base}/`, { headers: { cookie } });
  expect(page.status).toBe(401);
  expect(page.text).toContain("?token=");
  // The token still works, and starts a new session.
  expect((await runs(server.base, (await login(server.base)).cookie)).status).toBe(200);
});

test("stopping the server ends its sessions: the same inspector served again on the same port refuses the old cookie", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  const mount = createInspector(engine);
  const first = await serveHttp(() => createMcpServer(engine), { port: 0, token: TOKEN, mount });
  const base = first.url.replace(/\/mcp$/, "");
  const { cookie } = await login(base);
  expect((await runs(base, cookie)).status).toBe(200);
  await first.close();

  const again = await serveHttp(() => createMcpServer(engine), { port: first.port, token: TOKEN, mount });
  closer.add(() => again.close());
  expect(again.port).toBe(first.port); // same port, same inspector: the cookie's name matches
  expect((await runs(base, cookie)).status).toBe(401);
  expect((await runs(base, (await login(base)).cookie)).status).toBe(200);
});

test("sessions in memory are bounded: past the cap a login ends the oldest", () => {
  let now = 0;
  const sessions = new Sessions({ now: () => now, ttlMs: 1000, max: 3 });
  const ids = [sessions.create(), sessions.create(), sessions.create()];
  expect(ids.every((id) => sessions.valid(id))).toBe(true);
  const fourth = sessions.create();
  expect(sessions.size).toBe(3);
  expect(sessions.valid(ids[0]!)).toBe(false);
  expect(sessions.valid(fourth)).toBe(true);
  now = 1000; // all expired: the next login clears them out
  sessions.create();
  expect(sessions.size).toBe(1);
  expect(sessions.valid(fourth)).toBe(false);
});

test("in a browser, the token link logs in and leaves neither the address bar nor the back history holding the token", async () => {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "a1", { amount: 5 });
  const server = await serveInspector(closer, engine, { http: { token: TOKEN } });
  const browser = await launchBrowser();
  closer.add(() => browser.close());
  const page = await browser.newPage();
  page.setDefaultTimeout(30_000);

  await page.goto(`${server.base}/?token=${TOKEN}#/run/approval/a1`);
  expect(page.url()).toBe(`${server.base}/#/run/approval/a1`); // the route in the link is kept
  await page.locator(".run-head").waitFor();
  expect(await page.locator("h1, h2").first().textContent()).toContain("a1");

  // Walk back through every history entry: none is the URL with the token.
  const seen = [page.url()];
  while ((await page.goBack()) !== null) seen.push(page.url());
  expect(seen.join(" ")).not.toContain("token=");
  await page.goto(`${server.base}/`); // the cookie alone opens the page now
  await page.locator(".runs-list").waitFor();
}, 60_000);
