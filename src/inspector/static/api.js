// @ts-check
// The page's link to its server: the JSON API, the event stream, and small helpers around them. Only the
// views' controllers (run.js, runs.js, app.js) use it; the panels get their data given to them.

import { syncClock } from "./format.js";

/** An error answer of the API: `code`, `message`, maybe `problems`. */
export class ApiError extends Error {
  /** @param {number} status @param {any} body */
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    /** @type {string} */
    this.code = body?.error?.code ?? "HTTP";
    /** @type {string[] | null} */
    this.problems = body?.error?.problems ?? null;
  }
}

/**
 * Calls the JSON API (paths relative to the page, so it also works behind a path prefix); a `body`
 * makes it a POST. The caller names the answer's type (see types.js).
 * @template T
 * @param {string} path
 * @param {unknown} [body]
 * @returns {Promise<T>}
 */
export async function api(path, body) {
  /** @type {RequestInit & { headers: Record<string, string> }} */
  const init = { credentials: "same-origin", headers: { accept: "application/json" } };
  if (body !== undefined) {
    init.method = "POST";
    init.headers["content-type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const res = await fetch(`api${path}`, init);
  const data = await res.json().catch(() => null);
  if (!res.ok) throw new ApiError(res.status, data);
  if (data && typeof data.serverNow === "number") syncClock(data.serverNow);
  return data;
}

/** Path segment of a run: workflow and key, each URL-encoded. */
export function runPath(/** @type {string} */ workflow, /** @type {string} */ key) {
  return `/runs/${encodeURIComponent(workflow)}/${encodeURIComponent(key)}`;
}

/** A link to a run's view (with `?entry=` when an entry is chosen). */
export function runHref(
  /** @type {string} */ workflow,
  /** @type {string} */ key,
  /** @type {number | null} */ entry = null,
) {
  const hash = `#/run/${encodeURIComponent(workflow)}/${encodeURIComponent(key)}`;
  return entry === null ? hash : `${hash}?${new URLSearchParams({ entry: String(entry) })}`;
}

// ---- live updates ------------------------------------------------------------------------------

/** @type {Set<(state: "live" | "reconnecting") => void>} */
const liveListeners = new Set();

/** Subscribes to the connection state ("live", "reconnecting"). */
export function onLiveState(/** @type {(state: "live" | "reconnecting") => void} */ fn) {
  liveListeners.add(fn);
}

/**
 * Follows the server's events (all runs, or one run with {workflow, key}); calls onChange(event, data)
 * for each. The browser reconnects by itself; after a reconnect onChange("reconnected") lets the view
 * re-read what it may have missed. Returns a function that stops following.
 * @param {{ workflow: string, key: string } | null} run
 * @param {(type: string, data: unknown) => void} onChange
 */
export function follow(run, onChange) {
  const q = run ? `?workflow=${encodeURIComponent(run.workflow)}&key=${encodeURIComponent(run.key)}` : "";
  const source = new EventSource(`api/events${q}`);
  let opened = false;
  source.addEventListener("ready", () => {
    for (const fn of liveListeners) fn("live");
    if (opened) onChange("reconnected", {});
    opened = true;
  });
  source.addEventListener("error", () => {
    for (const fn of liveListeners) fn("reconnecting");
  });
  for (const type of ["run", "entry", "broadcast", "changed"]) {
    source.addEventListener(type, (e) => {
      let data = {};
      try {
        data = JSON.parse(/** @type {MessageEvent} */ (e).data);
      } catch {
        // an event without data still means "something changed"
      }
      onChange(type, data);
    });
  }
  return () => source.close();
}

/**
 * Runs fn at most once per `ms`, the last call winning (for refreshes after bursts of events); a call
 * while fn runs runs it once more after.
 * @param {() => Promise<void> | void} fn
 * @param {number} ms
 */
export function debounce(fn, ms) {
  /** @type {ReturnType<typeof setTimeout> | null} */
  let timer = null;
  let again = false;
  let running = false;
  const run = async () => {
    timer = null;
    if (running) {
      again = true;
      return;
    }
    running = true;
    try {
      await fn();
    } finally {
      running = false;
      if (again) {
        again = false;
        schedule();
      }
    }
  };
  const schedule = () => {
    if (!timer) timer = setTimeout(run, ms);
  };
  schedule.cancel = () => {
    if (timer) clearTimeout(timer);
    timer = null;
  };
  return schedule;
}

/** A random idempotency key (works outside secure contexts, unlike crypto.randomUUID). */
export function randomKey() {
  const a = new Uint8Array(16);
  crypto.getRandomValues(a);
  return `inspector-${Array.from(a, (b) => b.toString(16).padStart(2, "0")).join("")}`;
}
