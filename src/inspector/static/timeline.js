// @ts-check
// The step timeline: one row per history entry, a bar from its start to its end drawn to scale
// (timeline-scale.js), its attempts as segments coloured by status; join/race branches and loop
// iterations as lanes under the entry that opened them (timeline-rows.js); sleeps and queue waits
// hatched; replays as markers across every row. Beyond a few hundred rows only the rows in view are
// drawn, in a scrolling box. Containers fold and unfold; the arrow keys walk the entries.

import { h } from "preact";
import { useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { clock } from "./format.js";
import { isTerminal } from "./statuses.js";
import { pct, rowKey, TimelineRow } from "./timeline-row.js";
import { buildRows } from "./timeline-rows.js";
import { runScale, ticks } from "./timeline-scale.js";

/** @typedef {import("./types.js").EntryBar} EntryBar */
/** @typedef {import("./timeline-rows.js").Row} Row */
/** @typedef {import("./timeline-scale.js").Scale} Scale */
/**
 * @typedef {object} TimelineProps
 * @property {readonly EntryBar[]} entries
 * @property {{ status: string, createdAt: number, finishedAt: number | null }} run
 * @property {number} now the time live bars grow to (the server's clock)
 * @property {number | null} selectedId
 * @property {(entry: EntryBar) => void} onSelect
 * @property {() => void} [onGoToEntry] the right arrow key on an entry: move to the panel that shows it
 */

/** Beyond this many rows only the rows in view are drawn, in a scrolling box (long histories, loops). */
export const WINDOW_AT = 300;
/** Rows drawn above and below the view, so a quick scroll does not show blanks. */
const OVERSCAN = 30;
/** A row's height before one is measured (--row-h and its border). */
const ROW_H = 29;

/** The step timeline of a run. */
export function Timeline(/** @type {TimelineProps} */ props) {
  const { entries, run, now: t, selectedId, onSelect, onGoToEntry } = props;
  const [collapsed, setCollapsed] = useState(() => /** @type {ReadonlySet<number>} */ (new Set()));
  const rows = useMemo(() => buildRows(entries, collapsed), [entries, collapsed]);
  const live = !isTerminal(run.status);
  const scale = useMemo(() => runScale(entries, run, live, t), [entries, run, live, t]);
  const windowed = rows.length > WINDOW_AT;

  const scroller = useRef(/** @type {HTMLDivElement | null} */ (null));
  const list = useRef(/** @type {HTMLDivElement | null} */ (null));
  const [view, setView] = useState({ top: 0, height: 0, rowH: ROW_H });
  const [bar, setBar] = useState(0);
  /** The row index to focus once it is drawn (after a jump in a long timeline). */
  const pendingFocus = useRef(/** @type {number | null} */ (null));
  const queued = useRef(false);

  // A long timeline opens with the chosen entry in view; its rows' height is measured once drawn.
  useLayoutEffect(() => {
    const box = scroller.current;
    if (!windowed || !box) return;
    const drawn = list.current?.querySelector(".tl-row");
    const rowH = drawn?.getBoundingClientRect().height || ROW_H;
    const at = rows.findIndex((r) => r.type === "entry" && r.entry.id === selectedId);
    box.scrollTop = at >= 0 ? Math.max(0, at * rowH - box.clientHeight / 3) : 0;
    setView({ top: box.scrollTop, height: box.clientHeight, rowH });
  }, [windowed]);

  // After each draw: focus a row the keyboard jumped to; narrow the axis and overlay by the scroll bar.
  useLayoutEffect(() => {
    if (pendingFocus.current !== null) {
      const el = list.current?.querySelector(`.tl-main[data-index="${pendingFocus.current}"]`);
      if (el instanceof HTMLElement) {
        pendingFocus.current = null;
        el.focus();
      }
    }
    const box = scroller.current;
    const width = box ? box.offsetWidth - box.clientWidth : 0;
    if (width !== bar) setBar(width);
  });

  if (entries.length === 0)
    return h("div", { class: "timeline" }, h("p", { class: "muted" }, "No entries yet."));

  const toggle = (/** @type {EntryBar} */ e) => {
    const next = new Set(collapsed);
    if (next.has(e.id)) next.delete(e.id);
    else next.add(e.id);
    setCollapsed(next);
  };

  const onScroll = () => {
    if (queued.current) return;
    queued.current = true;
    requestAnimationFrame(() => {
      queued.current = false;
      const box = scroller.current;
      if (box) setView((v) => ({ ...v, top: box.scrollTop, height: box.clientHeight }));
    });
  };

  /** Arrow keys, Home and End move between entries (drawing them first when only some are drawn). */
  const onKeyDown = (/** @type {KeyboardEvent} */ ev) => {
    const from = /** @type {HTMLElement} */ (ev.target).closest?.(".tl-main");
    if (!(from instanceof HTMLElement)) return;
    if (ev.key === "ArrowRight") {
      if (onGoToEntry) {
        ev.preventDefault();
        onGoToEntry();
      }
      return;
    }
    const i = Number(from.dataset.index);
    const isEntry = (/** @type {number} */ j) => rows[j]?.type === "entry";
    const step = (/** @type {number} */ start, /** @type {number} */ by) => {
      for (let j = start + by; j >= 0 && j < rows.length; j += by) if (isEntry(j)) return j;
      return -1;
    };
    /** @type {Record<string, number>} */
    const targets = {
      ArrowDown: step(i, 1),
      ArrowUp: step(i, -1),
      Home: step(-1, 1),
      End: step(rows.length, -1),
    };
    const to = targets[ev.key];
    if (to === undefined || to < 0) return;
    ev.preventDefault();
    const box = scroller.current;
    if (box) {
      const top = to * view.rowH;
      if (top < box.scrollTop) box.scrollTop = top;
      else if (top + view.rowH > box.scrollTop + box.clientHeight)
        box.scrollTop = top + view.rowH - box.clientHeight;
      setView((v) => ({ ...v, top: box.scrollTop, height: box.clientHeight }));
    }
    const el = list.current?.querySelector(`.tl-main[data-index="${to}"]`);
    if (el instanceof HTMLElement) el.focus();
    else pendingFocus.current = to;
  };

  const first = windowed ? Math.max(0, Math.floor(view.top / view.rowH) - OVERSCAN) : 0;
  const last = windowed
    ? Math.min(rows.length, Math.ceil((view.top + view.height) / view.rowH) + OVERSCAN)
    : rows.length;
  const rowProps = { scale, now: t, selectedId, onSelect, onToggle: toggle };
  const drawn = rows.slice(first, last).map((row, k) =>
    h(TimelineRow, {
      key: rowKey(row, first + k),
      row,
      index: first + k,
      collapsed: row.type === "entry" && collapsed.has(row.entry.id),
      ...rowProps,
    }),
  );
  const spacer = (/** @type {string} */ key, /** @type {number} */ n) =>
    h("div", { key, class: "tl-spacer", "aria-hidden": "true", style: { height: `${n * view.rowH}px` } });
  const rowList = h(
    "div",
    { class: "tl-rows", role: "list", "aria-label": "History entries", ref: list, onKeyDown },
    windowed ? [spacer("above", first), ...drawn, spacer("below", rows.length - last)] : drawn,
  );

  return h(
    "div",
    { class: "timeline" },
    h(Axis, { scale, t0: scale.t0, bar }),
    h(
      "div",
      { class: "tl-body" },
      windowed ? h("div", { class: "tl-scroller", ref: scroller, onScroll }, rowList) : rowList,
      h(Overlay, { entries, scale, live, now: t, bar }),
    ),
    h(Legend, {}),
  );
}

/** The time axis: when the run started, ticks, and folded idle stretches. */
function Axis(/** @type {{ scale: Scale, t0: number, bar: number }} */ { scale, t0, bar }) {
  return h(
    "div",
    { class: "tl-axis", "aria-hidden": "true", style: bar > 0 ? { paddingRight: `${bar}px` } : undefined },
    h("span", { class: "tl-label tl-axis-title" }, `started ${clock(t0)}`),
    h(
      "span",
      { class: "tl-track" },
      ticks(scale).map((k) =>
        k.fold
          ? h(
              "span",
              {
                class: "tl-fold",
                style: { left: pct(k.left ?? 0), width: pct(k.w ?? 0) },
                title: `${k.label} idle, folded`,
              },
              h("span", {}, k.label),
            )
          : h("span", { class: "tl-tick", style: { left: pct(k.x) } }, k.label),
      ),
    ),
  );
}

/** Lines across every row: each replay, and now on a live run. */
function Overlay(
  /** @type {{ entries: readonly EntryBar[], scale: Scale, live: boolean, now: number, bar: number }} */ props,
) {
  const { entries, scale, live, now: t, bar } = props;
  const lines = [];
  for (const e of entries) {
    if (e.kind === "replay" && e.startedAt !== null)
      lines.push(
        h("span", {
          key: e.id,
          class: "tl-vline tl-replay-line",
          style: { left: pct(scale.at(e.startedAt)) },
          title: `replay at ${clock(e.startedAt)}`,
        }),
      );
  }
  if (live)
    lines.push(
      h("span", { key: "now", class: "tl-vline tl-now", style: { left: pct(scale.at(t)) }, title: "now" }),
    );
  return h(
    "div",
    { class: "tl-overlay", "aria-hidden": "true", style: bar > 0 ? { right: `${10 + bar}px` } : undefined },
    lines,
  );
}

function Legend() {
  const item = (/** @type {string} */ cls, /** @type {string} */ text) =>
    h("span", { class: "tl-legend-item" }, h("span", { class: `tl-swatch ${cls}` }), text);
  return h(
    "div",
    { class: "tl-legend", "aria-label": "Legend" },
    item("at-completed", "completed"),
    item("at-failed", "failed attempt"),
    item("at-running", "running"),
    item("at-interrupted", "interrupted"),
    item("tl-span-swatch", "retry backoff"),
    item("tl-wait-swatch tl-sleep", "sleep"),
    item("tl-wait-swatch tl-queue", "queue wait"),
    item("tl-replay-swatch", "replay"),
    h("span", { class: "tl-keys" }, "keys: ↑ ↓ move · Enter shows the entry · → goes to it"),
  );
}
