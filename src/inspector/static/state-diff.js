// @ts-check
// The run's state before and after an entry: what changed, as JSON Pointer paths, and both states whole.

import { h } from "preact";
import { isClipped, JsonBlock } from "./parts.js";

/**
 * One change from the state before to the state after.
 * @typedef {{ path: string, op: "added", after: unknown }
 *   | { path: string, op: "removed", before: unknown }
 *   | { path: string, op: "changed", before: unknown, after: unknown }} Change
 */

/** @param {unknown} v @returns {v is Record<string, unknown>} */
const isObj = (v) => v !== null && typeof v === "object" && !Array.isArray(v);
const esc = (/** @type {string} */ k) => k.replaceAll("~", "~0").replaceAll("/", "~1");
const has = (/** @type {object} */ o, /** @type {string} */ k) => Object.hasOwn(o, k);

/**
 * Changes from `a` to `b` as JSON Pointer paths: added, removed or changed; arrays of one length are
 * compared item by item, others as a whole.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {Change[]}
 */
export function diff(a, b, path = "", /** @type {Change[]} */ out = []) {
  if (JSON.stringify(a) === JSON.stringify(b)) return out;
  if (isObj(a) && isObj(b)) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      if (!has(b, k)) out.push({ path: `${path}/${esc(k)}`, op: "removed", before: a[k] });
      else if (!has(a, k)) out.push({ path: `${path}/${esc(k)}`, op: "added", after: b[k] });
      else diff(a[k], b[k], `${path}/${esc(k)}`, out);
    }
    return out;
  }
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) {
    for (let i = 0; i < a.length; i++) diff(a[i], b[i], `${path}/${i}`, out);
    return out;
  }
  out.push({ path: path || "/", op: "changed", before: a, after: b });
  return out;
}

/** A value on one line, for a table cell. */
const short = (/** @type {unknown} */ v) =>
  v === undefined ? "" : (JSON.stringify(v, null, 1) ?? "").replace(/\n\s*/g, " ");

/** The state before and after an entry: a table of what changed, and both states in full. */
export function StateDiff(/** @type {{ before: unknown, after: unknown }} */ { before, after }) {
  if (isClipped(before) || isClipped(after)) {
    return h(
      "div",
      {},
      h("p", { class: "muted" }, "The state is too large to compare here."),
      h(JsonBlock, { value: before, label: "State before" }),
      h(JsonBlock, { value: after, label: "State after" }),
    );
  }
  const changes = diff(before, after);
  return h(
    "div",
    { class: "state-diff" },
    changes.length
      ? h(
          "table",
          { class: "diff" },
          h("thead", {}, h("tr", {}, h("th", {}, "path"), h("th", {}, "before"), h("th", {}, "after"))),
          h(
            "tbody",
            {},
            changes.map((c) =>
              h(
                "tr",
                { class: `d-${c.op}`, key: c.path },
                h("td", { class: "mono" }, c.path),
                h(
                  "td",
                  { class: "mono before" },
                  c.op === "added" ? h("span", { class: "muted" }, "(none)") : short(c.before),
                ),
                h(
                  "td",
                  { class: "mono after" },
                  c.op === "removed" ? h("span", { class: "muted" }, "(removed)") : short(c.after),
                ),
              ),
            ),
          ),
        )
      : h("p", { class: "muted" }, "This entry did not change the state."),
    h(
      "details",
      {},
      h("summary", {}, "Whole state before and after"),
      h(
        "div",
        { class: "two" },
        h("div", {}, h("h4", {}, "Before"), h(JsonBlock, { value: before })),
        h("div", {}, h("h4", {}, "After"), h(JsonBlock, { value: after })),
      ),
    ),
  );
}
