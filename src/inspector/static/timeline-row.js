// @ts-check
// One row of the timeline: an entry (its bar to scale, its attempts as segments, a fold toggle on
// containers), a lane (a branch or loop iteration), or a note (a loop's compacted iterations).

import { h } from "preact";
import { assertNever } from "./assert.js";
import { duration, relative } from "./format.js";
import { endOf } from "./timeline-scale.js";

/** @typedef {import("./types.js").EntryBar} EntryBar */
/** @typedef {import("./timeline-rows.js").Row} Row */
/** @typedef {import("./timeline-scale.js").Scale} Scale */

/** A position on the track as CSS. */
export const pct = (/** @type {number} */ n) => `${Math.max(0, Math.min(100, n)).toFixed(3)}%`;
const indent = (/** @type {number} */ depth) => ({ paddingLeft: `${1.3 + depth * 0.9}rem` });

/** A segment of a track from time a to b. */
function seg(
  /** @type {Scale} */ scale,
  /** @type {number} */ a,
  /** @type {number} */ b,
  /** @type {string} */ cls,
  /** @type {string} */ title,
) {
  const left = scale.at(a);
  return h("span", {
    class: `tl-seg ${cls}`,
    title,
    style: { left: pct(left), width: pct(scale.at(b) - left) },
  });
}

/** What hovering an entry's bar says. */
function entryTitle(/** @type {EntryBar} */ e, /** @type {number} */ t) {
  const took = e.startedAt === null ? "" : ` · ${duration(endOf(e, t) - e.startedAt)}`;
  const err = e.error ? ` · ${e.error.name}: ${e.error.message}` : "";
  return `${e.path} · ${e.kind} · ${e.status}${took}${err}`;
}

/** The bar (and attempt segments) of one entry. */
function bars(/** @type {EntryBar} */ e, /** @type {Scale} */ scale, /** @type {number} */ t) {
  if (e.startedAt === null) return [];
  const end = endOf(e, t);
  const title = entryTitle(e, t);
  if (e.kind === "step" && e.attempts.length > 0) {
    return [
      seg(scale, e.startedAt, end, `tl-span st-${e.status}`, title),
      ...e.attempts.map((a) => {
        const aEnd = a.endedAt ?? (a.status === "running" ? t : a.startedAt);
        const err = a.error ? ` · ${a.error.name}: ${a.error.message}` : "";
        const why = `${e.path} · attempt ${a.n} · ${a.status} · ${duration(aEnd - a.startedAt)}${err}`;
        return seg(scale, a.startedAt, aEnd, `tl-attempt at-${a.status}`, why);
      }),
    ];
  }
  if (e.wait) return [seg(scale, e.startedAt, end, `tl-wait tl-${e.kind} st-${e.status}`, title)];
  if (e.container) return [seg(scale, e.startedAt, end, `tl-container st-${e.status}`, title)];
  if (e.marker)
    return [h("span", { class: `tl-mark tl-${e.kind}`, title, style: { left: pct(scale.at(e.startedAt)) } })];
  return [seg(scale, e.startedAt, end, `tl-attempt at-${e.status}`, title)];
}

/** What the right side of a label says: attempts, and how long it took or waits. */
export function note(/** @type {EntryBar} */ e, /** @type {number} */ t) {
  const parts = [];
  if (e.attempts.length > 1) parts.push(`${e.attempts.length}×`);
  const until = e.detail?.until;
  if (e.kind === "sleep" && e.status !== "completed" && typeof until === "number")
    parts.push(`wakes ${relative(until)}`);
  else if (e.kind === "queue" && e.status === "waiting") parts.push(waitsOn(e));
  else if (e.startedAt !== null && !e.marker) parts.push(duration(endOf(e, t) - e.startedAt));
  return parts.join(" · ");
}

/** What a waiting queue entry waits on: "on approve or reject", "on items · 2 of 5" for a batch. */
export function waitsOn(/** @type {EntryBar} */ e) {
  const d = e.detail ?? {};
  const queues = Array.isArray(d.queues) ? d.queues.map(String) : [String(d.queue ?? "queue")];
  const on = `on ${queues.length > 1 ? `${queues.slice(0, -1).join(", ")} or ${queues.at(-1)}` : queues[0]}`;
  if (typeof d.count !== "number") return on;
  // A long list of ids is left out of the bar's detail (shapes.ts entryBar): then only the size is said.
  return Array.isArray(d.messageIds)
    ? `${on} · ${d.messageIds.length} of ${d.count}`
    : `${on} · batch of ${d.count}`;
}

/**
 * @typedef {object} RowProps
 * @property {Row} row
 * @property {number} index its place in the rows (the arrow keys move by it)
 * @property {Scale} scale
 * @property {number} now
 * @property {number | null} selectedId
 * @property {boolean} collapsed a container's lanes are folded
 * @property {(e: EntryBar) => void} onSelect
 * @property {(e: EntryBar) => void} onToggle
 */

/** One row: an entry (a button, and a fold toggle on containers), a lane, or a note. */
export function TimelineRow(
  /** @type {RowProps} */ { row, index, scale, now: t, selectedId, collapsed, onSelect, onToggle },
) {
  switch (row.type) {
    case "note":
      return h(
        "div",
        {
          class: "tl-row tl-lane",
          role: "listitem",
          title:
            "Older iterations' entries are dropped to keep history bounded; their state changes are kept.",
        },
        h(
          "span",
          { class: "tl-label", style: indent(row.depth) },
          h("span", { class: "tl-note" }, row.label),
        ),
        h("span", { class: "tl-track" }),
      );
    case "lane": {
      let first = Number.POSITIVE_INFINITY;
      let last = Number.NEGATIVE_INFINITY;
      for (const e of row.entries) {
        if (e.startedAt === null) continue;
        first = Math.min(first, e.startedAt);
        last = Math.max(last, endOf(e, t));
      }
      return h(
        "div",
        { class: "tl-row tl-lane", role: "listitem" },
        h(
          "span",
          { class: "tl-label", style: indent(row.depth) },
          h("span", { class: "tl-lane-name" }, row.label),
          row.winner ? h("span", { class: "tl-note" }, "winner") : null,
        ),
        h(
          "span",
          { class: "tl-track" },
          Number.isFinite(first)
            ? seg(scale, first, last, `tl-lane-span st-${row.status}`, `${row.scope} · ${row.status}`)
            : null,
        ),
      );
    }
    case "entry": {
      const e = row.entry;
      const selected = e.id === selectedId;
      return h(
        "div",
        { class: `tl-row tl-entry st-row-${e.status}`, role: "listitem" },
        row.container
          ? h(
              "button",
              {
                type: "button",
                class: "tl-toggle",
                "aria-expanded": String(!collapsed),
                "aria-label": `${collapsed ? "Expand" : "Collapse"} ${e.path}`,
                "data-toggle": String(e.id),
                onClick: () => onToggle(e),
              },
              collapsed ? "▸" : "▾",
            )
          : null,
        h(
          "button",
          {
            type: "button",
            class: `tl-main${selected ? " selected" : ""}`,
            "data-id": String(e.id),
            "data-path": e.path,
            "data-status": e.status,
            "data-index": String(index),
            "aria-current": selected ? "true" : undefined,
            "aria-label": `${e.path}, ${e.kind}, ${e.status}${e.attempts.length > 1 ? `, ${e.attempts.length} attempts` : ""}`,
            onClick: () => onSelect(e),
          },
          h(
            "span",
            { class: "tl-label", style: indent(row.depth) },
            h("span", { class: `tl-kind k-${e.kind}` }, e.kind),
            h("span", { class: "tl-name" }, e.name),
            h("span", { class: `tl-note st-text-${e.status}` }, note(e, t)),
          ),
          h("span", { class: "tl-track" }, bars(e, scale, t)),
        ),
      );
    }
    default:
      return assertNever(row);
  }
}

/** A row's key: entries by id, lanes by scope, notes by where they are. */
export function rowKey(/** @type {Row} */ row, /** @type {number} */ i) {
  if (row.type === "entry") return `e${row.entry.id}`;
  if (row.type === "lane") return `l${row.scope}`;
  return `n${i}`;
}
