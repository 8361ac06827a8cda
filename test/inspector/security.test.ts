// The inspector behind the MCP server's guards: the bearer token (or the session cookie a ?token= link
// sets), Host and Origin checks against DNS rebinding, body limits and types, and read-only mode.

import { afterEach, expect, test } from "vitest";
import { Closer, startEngine, tempDb, until } from "../mcp/helpers.js";
import { request, serveInspector } from "./helpers.js";

const closer = new Closer();
afterEach(() => closer.closeAll());

const TOKEN = "s3cret-inspector-token";

async function waitingApproval() {
  const engine = await startEngine(closer, tempDb(closer));
  await engine.getOrCreate("approval", "a1", { amount: 5 });
  await until(async () => (await engine.store.findRun("approval", "a1"))?.status === "waiting", "the wait");
  return engine;
}

test("with a token, nothing is served without it; a ?token= link sets a session cookie that opens the page and the API, not /mcp", async () => {
  const engine = await waitingApproval();
  const server = await serveInspector(closer, engine, { http: { token: TOKEN } });

  const api = await request(`${server.base}/api/runs`);
  expect(api.status).toBe(401);
  expect(api.json.error.code).toBe("UNAUTHORIZED");
  expect(api.headers["www-authenticate"]).toContain("Bearer");
  const page = await request(`${server.base}/`);
  expect(page.status).toBe(401);
  expect(page.text).toContain("?token=");
  expect(page.text).not.toContain(TOKEN);
  expect((await request(`${server.base}/assets/app.js`)).status).toBe(401);
  expect((await request(`${server.base}/api/events`)).status).toBe(401);
  expect(
    (await request(`${server.base}/api/runs`, { headers: { authorization: "Bearer nope" } })).status,
  ).toBe(401);
  const post = await request(`${server.base}/api/runs/approval/a1/cancel`, { body: {} });
  expect(post.status).toBe(401);

  // Programs send the token as a bearer header.
  const bearer = await request(`${server.base}/api/runs`, { headers: { authorization: `Bearer ${TOKEN}` } });
  expect(bearer.status).toBe(200);
  expect(bearer.json.runs).toHaveLength(1);

  // People open the link once: a wrong token is refused, the right one becomes a cookie and leaves the URL.
  expect((await request(`${server.base}/?token=wrong`)).status).toBe(401);
  const login = await request(`${server.base}/?token=${TOKEN}&x=1`);
  expect(login.status).toBe(303);
  expect(login.headers.location).toBe("/?x=1");
  const setCookie = String(login.headers["set-cookie"]);
  expect(setCookie).toContain("HttpOnly");
  expect(setCookie).toContain("SameSite=Strict");
  expect(setCookie).not.toContain(TOKEN); // the cookie holds a random session id, never the token
  const cookie = setCookie.split(";")[0]!;

  expect((await request(`${server.base}/`, { headers: { cookie } })).status).toBe(200);
  expect((await request(`${server.base}/api/runs`, { headers: { cookie } })).status).toBe(200);
  const forged = cookie.replace(/=.*/, "=forged");
  expect((await request(`${server.base}/api/runs`, { headers: { cookie: forged } })).status).toBe(401);
  const mcp = await request(`${server.base}/mcp`, {
    headers: { cookie },
    body: { jsonrpc: "2.0", id: 1, method: "ping" },
  });
  expect(mcp.status).toBe(401);
});

test("a foreign Host or Origin is refused before anything else, as for /mcp", async () => {
  const engine = await waitingApproval();
  const server = await serveInspector(closer, engine);
  const evilHost = await request(`${server.base}/api/runs`, { headers: { host: "evil.example" } });
  expect(evilHost.status).toBe(403);
  expect(evilHost.text).toContain("Host");
  expect((await request(`${server.base}/`, { headers: { host: "evil.example:80" } })).status).toBe(403);

  const evilOrigin = await request(`${server.base}/api/runs/approval/a1/cancel`, {
    headers: { origin: "https://evil.example" },
    body: {},
  });
  expect(evilOrigin.status).toBe(403);
  expect(evilOrigin.text).toContain("Origin");
  expect((await engine.store.findRun("approval", "a1"))?.status).toBe("waiting");
  const evilEvents = await request(`${server.base}/api/events`, {
    headers: { origin: "http://evil.example" },
  });
  expect(evilEvents.status).toBe(403);

  const local = await request(`${server.base}/api/runs`, { headers: { origin: server.base } });
  expect(local.status).toBe(200);
});

test("action bodies must be JSON objects within the size limit", async () => {
  const engine = await waitingApproval();
  const server = await serveInspector(closer, engine, { http: { maxBodyBytes: 2000 } });
  const url = `${server.base}/api/runs/approval/a1/messages`;
  const huge = await request(url, { body: { queue: "decisions", body: { by: "x".repeat(5000) } } });
  expect(huge.status).toBe(413);
  expect(huge.json.error.code).toBe("BODY_TOO_LARGE");
  const form = await request(url, {
    raw: "queue=decisions",
    headers: { "content-type": "application/x-www-form-urlencoded" },
  });
  expect(form.status).toBe(415);
  const broken = await request(url, { raw: "{nope", headers: { "content-type": "application/json" } });
  expect(broken.status).toBe(400);
  expect(broken.json.error.code).toBe("INVALID_JSON");
  expect((await request(url, { body: [1, 2] })).status).toBe(400);
  expect((await engine.store.findRun("approval", "a1"))?.status).toBe("waiting");
});

test("read-only: the API refuses to send, replay and cancel, and tells the page to hide its actions", async () => {
  const engine = await waitingApproval();
  const server = await serveInspector(closer, engine, { inspector: { readOnly: true } });
  const api = (path: string, body?: unknown) =>
    request(`${server.base}/api${path}`, body === undefined ? {} : { body });

  expect((await api("/meta")).json.readOnly).toBe(true);
  const run = await api("/runs/approval/a1");
  expect(run.status).toBe(200);
  expect(run.json.can).toEqual({ send: false, cancel: false, replay: false });
  expect((await api("/runs/approval/a1/history")).status).toBe(200);

  for (const [path, body] of [
    ["/runs/approval/a1/messages", { queue: "decisions", body: { approve: true, by: "ann" } }],
    ["/runs/approval/a1/replay", { dryRun: true }],
    ["/runs/approval/a1/cancel", {}],
  ] as const) {
    const res = await api(path, body);
    expect(res.status).toBe(403);
    expect(res.json.error.code).toBe("READ_ONLY");
  }
  expect((await engine.store.findRun("approval", "a1"))?.status).toBe("waiting");
});
