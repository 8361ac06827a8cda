// Shared helpers of the inspector page: building DOM safely, formatting, the JSON API, the event stream.
// No framework: elements are made with h(), text always goes through textContent (never innerHTML).

/**
 * Makes an element. attrs: `class`, `text`, `on<event>` handlers, `style` (an object of properties),
 * `dataset`; anything else becomes an attribute (false/null/undefined leave it out).
 */
export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (v === false || v === null || v === undefined) continue;
    if (k === "class") el.className = v;
    else if (k === "text") el.textContent = v;
    else if (k === "style") for (const [p, val] of Object.entries(v)) el.style.setProperty(p, val);
    else if (k === "dataset") Object.assign(el.dataset, v);
    else if (k.startsWith("on") && typeof v === "function") el.addEventListener(k.slice(2), v);
    else el.setAttribute(k, v === true ? "" : String(v));
  }
  append(el, children);
  return el;
}

export function append(el, children) {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.append(c instanceof Node ? c : document.createTextNode(String(c)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

// ---- time ------------------------------------------------------------------------------------

/** Milliseconds between the server's clock and this browser's, so "now" matches the server's. */
let skew = 0;
export function syncClock(serverNow) {
  if (typeof serverNow === "number") skew = serverNow - Date.now();
}
export function now() {
  return Date.now() + skew;
}

/** "1.2s", "340ms", "4m 12s", "2h 5m", "3d 4h". */
export function duration(ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(a)}ms`;
  if (a < 10_000) return `${(a / 1000).toFixed(1)}s`;
  if (a < 60_000) return `${Math.round(a / 1000)}s`;
  if (a < 3_600_000) return `${Math.floor(a / 60_000)}m ${Math.floor((a % 60_000) / 1000)}s`;
  if (a < 86_400_000) return `${Math.floor(a / 3_600_000)}h ${Math.floor((a % 3_600_000) / 60_000)}m`;
  return `${Math.floor(a / 86_400_000)}d ${Math.floor((a % 86_400_000) / 3_600_000)}h`;
}

/** "14:03:27" today, else "2025-03-04 14:03". */
export function clock(ms) {
  if (ms === null || ms === undefined) return "–";
  const d = new Date(ms);
  const pad = (n) => String(n).padStart(2, "0");
  const t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const today = new Date(now());
  if (d.toDateString() === today.toDateString()) return t;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${t.slice(0, 5)}`;
}

/** "3m ago", "in 2h 5m". */
export function relative(ms) {
  if (ms === null || ms === undefined) return "";
  const d = ms - now();
  if (Math.abs(d) < 1000) return "now";
  return d < 0 ? `${duration(-d)} ago` : `in ${duration(d)}`;
}

/** A <time> element showing a clock time, with the full ISO time on hover. */
export function timeEl(ms, rel = false) {
  if (ms === null || ms === undefined) return h("span", { class: "muted", text: "–" });
  const iso = new Date(ms).toISOString();
  return h("time", { datetime: iso, title: iso }, rel ? `${clock(ms)} (${relative(ms)})` : clock(ms));
}

// ---- values ------------------------------------------------------------------------------------

/** A JSON value as an indented block; a value the server clipped shows its size and start. */
export function jsonBlock(value, label) {
  if (value && typeof value === "object" && value.$clipped === true) {
    return h(
      "div",
      { class: "clipped" },
      h("p", {
        class: "muted",
        text: `${label ?? "Value"} is ${bytes(value.bytes)}; its first 2,000 characters:`,
      }),
      h("pre", { class: "json", text: value.preview }),
    );
  }
  return h("pre", { class: "json", tabindex: "0", text: JSON.stringify(value ?? null, null, 2) });
}

export function bytes(n) {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** A status as a coloured badge (colour comes from the status class, text says it too). */
export function badge(status) {
  return h("span", { class: `badge st-${status}`, text: status });
}

// ---- the API -----------------------------------------------------------------------------------

/** An error answer of the API: `code`, `message`, maybe `problems`. */
export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? "HTTP";
    this.problems = body?.error?.problems ?? null;
  }
}

/** Calls the JSON API (paths relative to the page, so it also works behind a path prefix). */
export async function api(path, body) {
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
export function runPath(workflow, key) {
  return `/runs/${encodeURIComponent(workflow)}/${encodeURIComponent(key)}`;
}

// ---- live updates ------------------------------------------------------------------------------

const liveListeners = new Set();
/** Subscribes to the connection state ("live", "reconnecting"). */
export function onLiveState(fn) {
  liveListeners.add(fn);
}
function setLiveState(state) {
  for (const fn of liveListeners) fn(state);
}

/**
 * Follows the server's events (all runs, or one run with {workflow, key}); calls onChange(event, data)
 * for each. The browser reconnects by itself; after a reconnect onChange("reconnected") lets the view
 * re-read what it may have missed. Returns a function that stops following.
 */
export function follow(run, onChange) {
  const q = run ? `?workflow=${encodeURIComponent(run.workflow)}&key=${encodeURIComponent(run.key)}` : "";
  const source = new EventSource(`api/events${q}`);
  let opened = false;
  source.addEventListener("ready", () => {
    setLiveState("live");
    if (opened) onChange("reconnected", {});
    opened = true;
  });
  source.addEventListener("error", () => setLiveState("reconnecting"));
  for (const type of ["run", "entry", "broadcast", "changed"]) {
    source.addEventListener(type, (e) => {
      let data = {};
      try {
        data = JSON.parse(e.data);
      } catch {
        // an event without data still means "something changed"
      }
      onChange(type, data);
    });
  }
  return () => source.close();
}

/** Runs fn at most once per `ms`, the last call winning (for refreshes after bursts of events). */
export function debounce(fn, ms) {
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
