// GET /api/events: the engine's events as server-sent events, so the page follows runs without reloading.
//
//   ?workflow=W&key=K   one run: `run` (status), `entry` (a history entry recorded or changed), `broadcast`
//   (none)              every run's `run` events (the runs list)
//   always              `changed` when another process wrote to the database (an attached server sees
//                       no events of the runs it does not execute): the page re-reads what it shows
//
// IMPORTANT: events only say what changed; the page re-reads through the JSON API, so a dropped or
// coalesced event costs a refresh, never a wrong picture.

import type { IncomingMessage, ServerResponse } from "node:http";
import type { WaymarkEngine } from "../engine/api.js";
import type { EngineEvent } from "../engine/events.js";
import { BASE_HEADERS } from "./respond.js";

/** Comment lines that keep proxies and browsers from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
/** Other processes' writes arrive as often as every poll; tell the page at most this often. */
const EXTERNAL_EVERY_MS = 250;

export function streamEvents(
  engine: WaymarkEngine,
  req: IncomingMessage,
  res: ServerResponse,
  url: URL,
): void {
  const workflow = url.searchParams.get("workflow");
  const key = url.searchParams.get("key");
  const one = workflow !== null && key !== null;
  res.writeHead(200, {
    ...BASE_HEADERS,
    "content-type": "text/event-stream; charset=utf-8",
    "cache-control": "no-cache, no-transform",
    connection: "keep-alive",
    "x-accel-buffering": "no",
  });
  res.socket?.setNoDelay(true);
  const send = (event: string, data: unknown) => {
    if (!res.writableEnded) res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  };
  res.write("retry: 2000\n\n");
  send("ready", { run: one ? { workflow, key } : null, serverNow: engine.clock.now() });

  let externalTimer: NodeJS.Timeout | null = null;
  let externalPending = false;
  const external = () => {
    if (externalTimer) {
      externalPending = true;
      return;
    }
    send("changed", {});
    externalTimer = setTimeout(function flush() {
      externalTimer = null;
      if (externalPending) {
        externalPending = false;
        external();
      }
    }, EXTERNAL_EVERY_MS);
  };

  const mine = (e: { workflow: string; key: string }) => !one || (e.workflow === workflow && e.key === key);
  const off = engine.on((e: EngineEvent) => {
    if (e.type === "external") external();
    else if (e.type === "run" && mine(e)) send("run", { workflow: e.workflow, key: e.key, status: e.status });
    else if (one && e.type === "entry" && mine(e)) {
      send("entry", {
        workflow: e.workflow,
        key: e.key,
        id: e.row.seq,
        path: e.row.scope === "" ? e.row.name : `${e.row.scope}/${e.row.name}`,
        status: e.row.status,
      });
    } else if (one && e.type === "broadcast" && mine(e)) {
      send("broadcast", { workflow: e.workflow, key: e.key, event: e.event });
    }
  });
  const heartbeat = setInterval(() => {
    if (!res.writableEnded) res.write(": ping\n\n");
  }, HEARTBEAT_MS);
  heartbeat.unref();

  const stop = () => {
    off();
    clearInterval(heartbeat);
    if (externalTimer) clearTimeout(externalTimer);
  };
  req.on("close", stop);
  res.on("close", stop);
}
