// @ts-check
// Formatting for people (no DOM): durations, clock times, "in 2h 5m", sizes; and "now" as the server
// counts it, so times computed here match the server's.

/** Milliseconds between the server's clock and this browser's. */
let skew = 0;

/** Takes the server's clock from an answer's `serverNow`. */
export function syncClock(/** @type {unknown} */ serverNow) {
  if (typeof serverNow === "number") skew = serverNow - Date.now();
}

/** Now on the server's clock (ms since the epoch). */
export function now() {
  return Date.now() + skew;
}

/** "1.2s", "340ms", "4m 12s", "2h 5m", "3d 4h"; "–" when there is no duration. */
export function duration(/** @type {number | null | undefined} */ ms) {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return "–";
  const a = Math.abs(ms);
  if (a < 1000) return `${Math.round(a)}ms`;
  if (a < 10_000) return `${(a / 1000).toFixed(1)}s`;
  if (a < 60_000) return `${Math.round(a / 1000)}s`;
  if (a < 3_600_000) return `${Math.floor(a / 60_000)}m ${Math.floor((a % 60_000) / 1000)}s`;
  if (a < 86_400_000) return `${Math.floor(a / 3_600_000)}h ${Math.floor((a % 3_600_000) / 60_000)}m`;
  return `${Math.floor(a / 86_400_000)}d ${Math.floor((a % 86_400_000) / 3_600_000)}h`;
}

/** "14:03:27" today, else "2025-03-04 14:03" (local time). */
export function clock(/** @type {number | null | undefined} */ ms) {
  if (ms === null || ms === undefined) return "–";
  const d = new Date(ms);
  const pad = (/** @type {number} */ n) => String(n).padStart(2, "0");
  const t = `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
  const today = new Date(now());
  if (d.toDateString() === today.toDateString()) return t;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${t.slice(0, 5)}`;
}

/** "3m ago", "in 2h 5m", "now"; "" when there is no time. */
export function relative(/** @type {number | null | undefined} */ ms) {
  if (ms === null || ms === undefined) return "";
  const d = ms - now();
  if (Math.abs(d) < 1000) return "now";
  return d < 0 ? `${duration(-d)} ago` : `in ${duration(d)}`;
}

/** "512 bytes", "1.5 KiB", "2.0 MiB". */
export function bytes(/** @type {number} */ n) {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

/** "1 entry", "3 entries": a count with its noun. */
export function plural(/** @type {number} */ n, /** @type {string} */ one, /** @type {string} */ many) {
  return `${n.toLocaleString("en")} ${n === 1 ? one : many}`;
}
