// @ts-check
// Small pieces every panel uses: a status badge, a time, a JSON value (clipped ones say their size).
// Components are functions of their props (Preact); text always goes in as text, never as HTML.

import { h } from "preact";
import { bytes, clock, relative } from "./format.js";

/** @typedef {import("./types.js").Clipped} Clipped */

/** A status as a coloured badge (the colour comes from the status class; the text says it too). */
export function Badge(/** @type {{ status: string }} */ { status }) {
  return h("span", { class: `badge st-${status}` }, status);
}

/** A <time> showing a clock time (and how long ago with `rel`), with the full ISO time on hover. */
export function Time(/** @type {{ ms: number | null | undefined, rel?: boolean }} */ { ms, rel = false }) {
  if (ms === null || ms === undefined) return h("span", { class: "muted" }, "–");
  const iso = new Date(ms).toISOString();
  return h("time", { dateTime: iso, title: iso }, rel ? `${clock(ms)} (${relative(ms)})` : clock(ms));
}

/** A value the server cut to its size and start (see shapes.ts clip()). */
export function isClipped(/** @type {unknown} */ value) {
  return (
    value !== null && typeof value === "object" && /** @type {Partial<Clipped>} */ (value).$clipped === true
  );
}

/** A JSON value as an indented block; a value the server clipped shows its size and start. */
export function JsonBlock(/** @type {{ value: unknown, label?: string }} */ { value, label }) {
  if (isClipped(value)) {
    const c = /** @type {Clipped} */ (value);
    return h(
      "div",
      { class: "clipped" },
      h("p", { class: "muted" }, `${label ?? "Value"} is ${bytes(c.bytes)}; its first 2,000 characters:`),
      h("pre", { class: "json" }, c.preview),
    );
  }
  return h("pre", { class: "json", tabIndex: 0 }, JSON.stringify(value ?? null, null, 2));
}
