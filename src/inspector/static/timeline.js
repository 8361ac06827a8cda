// The step timeline: one row per history entry, a bar from its start to its end drawn to scale, its
// attempts as segments coloured by status; join/race branches and loop iterations as lanes under the
// entry that opened them; sleeps and queue waits hatched; replays as markers across every row.
//
// To scale, with one exception: an idle stretch longer than all the rest of the run put together (a
// failed run replayed an hour later) is folded to a narrow band labelled with its length.

import { append, clock, duration, fill, h, relative } from "./lib.js";

const FOLD_PCT = 4;
/** Beyond this many rows only the rows in view are drawn, in a scrolling box (long histories, loops). */
const WINDOW_AT = 300;
/** Rows drawn above and below the view, so a quick scroll does not show blanks. */
const OVERSCAN = 30;
/** A row's height before one is measured (--row-h and its border). */
const ROW_H = 29;
const CONTAINERS = new Set(["join", "race", "loop"]);

// ---- rows ----------------------------------------------------------------------------------------

/** The scope suffix of a branch ("[mail]") or loop iteration ("#3") directly below `path`, or null. */
function childSuffix(scope, path) {
  if (!scope.startsWith(path)) return null;
  const rest = scope.slice(path.length);
  return /^(\[[^\]/]*\]|#\d+)$/.test(rest) ? rest : null;
}

const RANK = { failed: 5, cancelled: 4, retrying: 3, running: 3, waiting: 2, completed: 1 };
function worst(statuses) {
  let best = "completed";
  for (const s of statuses) if ((RANK[s] ?? 0) > (RANK[best] ?? 0)) best = s;
  return best;
}

/**
 * Orders entries as a tree: root entries by id, each container followed by its branches or iterations
 * (a lane row each) and their entries. Entries of scopes no container opens come last, so none is lost.
 */
export function buildRows(entries, collapsed) {
  const byScope = new Map();
  for (const e of entries) {
    const scope = e.scope === "~replay" ? "" : e.scope;
    if (!byScope.has(scope)) byScope.set(scope, []);
    byScope.get(scope).push(e);
  }
  for (const list of byScope.values()) list.sort((a, b) => a.id - b.id);
  const rows = [];
  const placed = new Set();

  const walk = (scope, depth) => {
    placed.add(scope);
    for (const e of byScope.get(scope) ?? []) {
      const container = CONTAINERS.has(e.kind);
      rows.push({ type: "entry", entry: e, depth, container });
      if (!container || collapsed.has(e.id)) {
        if (container) for (const s of byScope.keys()) if (childSuffix(s, e.path)) markPlaced(s);
        continue;
      }
      const compacted = e.kind === "loop" ? (e.detail?.compacted?.iterations ?? 0) : 0;
      if (compacted > 0) {
        rows.push({
          type: "note",
          depth: depth + 1,
          label: `${compacted} earlier iteration${compacted === 1 ? "" : "s"} compacted`,
        });
      }
      const children = [...byScope.keys()].filter((s) => childSuffix(s, e.path) !== null);
      const order = Array.isArray(e.detail?.branches) ? e.detail.branches : [];
      children.sort((a, b) => {
        const sa = childSuffix(a, e.path);
        const sb = childSuffix(b, e.path);
        const ia = order.indexOf(sa.slice(1, -1));
        const ib = order.indexOf(sb.slice(1, -1));
        if (ia !== ib && ia >= 0 && ib >= 0) return ia - ib;
        if (sa.startsWith("#") && sb.startsWith("#")) return Number(sa.slice(1)) - Number(sb.slice(1));
        return byScope.get(a)[0].id - byScope.get(b)[0].id;
      });
      for (const s of children) {
        const list = byScope.get(s);
        const suffix = childSuffix(s, e.path);
        rows.push({
          type: "lane",
          scope: s,
          label: suffix.startsWith("#") ? `iteration ${suffix.slice(1)}` : suffix.slice(1, -1),
          depth: depth + 1,
          entries: list,
          status: worst(list.map((x) => x.status)),
          winner: e.kind === "race" && e.detail?.winner === suffix.slice(1, -1),
        });
        walk(s, depth + 2);
      }
    }
  };
  const markPlaced = (scope) => {
    placed.add(scope);
    for (const s of byScope.keys()) if (!placed.has(s) && s.startsWith(`${scope}/`)) markPlaced(s);
  };
  walk("", 0);
  for (const s of byScope.keys()) {
    if (placed.has(s)) continue;
    const list = byScope.get(s);
    rows.push({
      type: "lane",
      scope: s,
      label: s,
      depth: 0,
      entries: list,
      status: worst(list.map((x) => x.status)),
    });
    walk(s, 1);
  }
  return rows;
}

// ---- scale ---------------------------------------------------------------------------------------

/** When an entry's bar ends: its end, or now while it is still going. */
function endOf(e, t) {
  if (e.endedAt !== null && e.endedAt !== undefined) return e.endedAt;
  if (e.status === "completed" || e.status === "failed" || e.status === "cancelled") return e.startedAt;
  return t;
}

/** Maps times to percent of the track, folding idle stretches longer than everything else. */
export function makeScale(t0, t1, intervals) {
  const total = Math.max(t1 - t0, 1);
  const merged = [];
  for (const [a, b] of intervals.filter(([a]) => a !== null).sort((x, y) => x[0] - y[0])) {
    const last = merged.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  const gaps = [];
  let cursor = t0;
  for (const [a, b] of merged) {
    if (a > cursor) gaps.push([cursor, a]);
    cursor = Math.max(cursor, b);
  }
  if (t1 > cursor) gaps.push([cursor, t1]);
  const folded = [];
  let foldedTime = 0;
  for (const g of gaps.sort((x, y) => y[1] - y[0] - (x[1] - x[0]))) {
    const len = g[1] - g[0];
    if (len > 1000 && len > total - foldedTime - len) {
      folded.push(g);
      foldedTime += len;
    }
  }
  folded.sort((x, y) => x[0] - y[0]);
  const pieces = [];
  cursor = t0;
  for (const [a, b] of folded) {
    if (a > cursor) pieces.push({ a: cursor, b: a, fold: false });
    pieces.push({ a, b, fold: true });
    cursor = b;
  }
  if (t1 > cursor || pieces.length === 0)
    pieces.push({ a: cursor, b: Math.max(t1, cursor + 1), fold: false });
  const open = total - foldedTime;
  const room = 100 - FOLD_PCT * folded.length;
  let x = 0;
  for (const p of pieces) {
    p.x = x;
    p.w = p.fold ? FOLD_PCT : open > 0 ? ((p.b - p.a) / open) * room : room / pieces.length;
    x += p.w;
  }
  const at = (t) => {
    if (t <= t0) return 0;
    for (const p of pieces) {
      if (t <= p.b) return p.x + ((t - p.a) / Math.max(p.b - p.a, 1)) * p.w;
    }
    return 100;
  };
  return { at, pieces, t0, t1, openTime: open };
}

/**
 * Tick marks: each fold's length, then round steps inside each unfolded piece, labelled from the run's
 * start in the first piece and from the piece's own start after a fold.
 */
function ticks(scale) {
  const out = [];
  for (const p of scale.pieces) {
    if (p.fold) out.push({ x: p.x + p.w / 2, label: duration(p.b - p.a), fold: true, w: p.w, left: p.x });
  }
  scale.pieces.forEach((p, i) => {
    if (p.fold) return;
    const span = Math.max(p.b - p.a, 1);
    const target = span / Math.max(1, Math.round((6 * p.w) / 100));
    const pow = 10 ** Math.floor(Math.log10(target));
    const step = [1, 2, 5, 10].map((m) => m * pow).find((s) => s >= target) ?? target;
    const origin = i === 0 ? scale.t0 : p.a;
    for (let e = Math.ceil((p.a - origin) / step) * step; origin + e <= p.b; e += step) {
      const x = scale.at(origin + e);
      if (out.some((o) => Math.abs(o.x - x) < (o.fold ? 9 : 7))) continue;
      out.push({ x, label: e === 0 ? "0" : `+${duration(e)}` });
    }
  });
  return out;
}

// ---- drawing -------------------------------------------------------------------------------------

function pct(n) {
  return `${Math.max(0, Math.min(100, n)).toFixed(3)}%`;
}

function seg(scale, a, b, cls, title) {
  const left = scale.at(a);
  return h("span", {
    class: `tl-seg ${cls}`,
    title,
    style: { left: pct(left), width: pct(scale.at(b) - left) },
  });
}

function entryTitle(e, t) {
  const took = e.startedAt === null ? "" : ` · ${duration(endOf(e, t) - e.startedAt)}`;
  const err = e.error ? ` · ${e.error.name}: ${e.error.message}` : "";
  return `${e.path} · ${e.kind} · ${e.status}${took}${err}`;
}

/** The bar (and attempt segments) of one entry. */
function bars(e, scale, t) {
  if (e.startedAt === null) return [];
  const end = endOf(e, t);
  const out = [];
  const title = entryTitle(e, t);
  if (e.kind === "step" && e.attempts.length > 0) {
    out.push(seg(scale, e.startedAt, end, `tl-span st-${e.status}`, title));
    for (const a of e.attempts) {
      const aEnd = a.endedAt ?? (a.status === "running" ? t : a.startedAt);
      const err = a.error ? ` · ${a.error.name}: ${a.error.message}` : "";
      out.push(
        seg(
          scale,
          a.startedAt,
          aEnd,
          `tl-attempt at-${a.status}`,
          `${e.path} · attempt ${a.n} · ${a.status} · ${duration(aEnd - a.startedAt)}${err}`,
        ),
      );
    }
    return out;
  }
  if (e.kind === "sleep" || e.kind === "queue") {
    out.push(seg(scale, e.startedAt, end, `tl-wait tl-${e.kind} st-${e.status}`, title));
    return out;
  }
  if (CONTAINERS.has(e.kind)) {
    out.push(seg(scale, e.startedAt, end, `tl-container st-${e.status}`, title));
    return out;
  }
  if (e.kind === "replay" || e.kind === "version") {
    const left = scale.at(e.startedAt);
    out.push(h("span", { class: `tl-mark tl-${e.kind}`, title, style: { left: pct(left) } }));
    return out;
  }
  out.push(seg(scale, e.startedAt, end, `tl-attempt at-${e.status}`, title));
  return out;
}

/** What the right side of a label says: attempts, and how long it took or waits. */
function note(e, t) {
  const parts = [];
  if (e.attempts.length > 1) parts.push(`${e.attempts.length}×`);
  if (e.kind === "sleep" && e.status !== "completed" && e.detail?.until)
    parts.push(`wakes ${relative(e.detail.until)}`);
  else if (e.kind === "queue" && e.status === "waiting") parts.push(`on ${e.detail?.queue ?? "queue"}`);
  else if (e.startedAt !== null && e.kind !== "replay" && e.kind !== "version")
    parts.push(duration(endOf(e, t) - e.startedAt));
  return parts.join(" · ");
}

/**
 * Draws the timeline into `root`. opts: entries, run ({createdAt, finishedAt, status}), now, selectedId,
 * collapsed (Set of container ids), onSelect(entry), onToggle(entry).
 */
export function renderTimeline(root, opts) {
  const { entries, run, selectedId, collapsed } = opts;
  const t = opts.now;
  const live = !["completed", "failed", "cancelled"].includes(run.status);
  const focused = root.contains(document.activeElement) ? document.activeElement.dataset : {};

  const t0 = Math.min(run.createdAt, ...entries.filter((e) => e.startedAt !== null).map((e) => e.startedAt));
  let t1 = live ? t : (run.finishedAt ?? t0);
  for (const e of entries) if (e.startedAt !== null) t1 = Math.max(t1, endOf(e, t));
  const scale = makeScale(
    t0,
    t1,
    // Containers span their branches' idle gaps too (a join reopened by a replay an hour later): the
    // entries inside them say when there was work, so only those count for folding.
    entries
      .filter((e) => e.startedAt !== null && e.kind !== "replay" && !CONTAINERS.has(e.kind))
      .map((e) => [e.startedAt, endOf(e, t)]),
  );
  const rows = buildRows(entries, collapsed);

  const axis = h(
    "div",
    { class: "tl-axis", "aria-hidden": "true" },
    h("span", { class: "tl-label tl-axis-title", text: `started ${clock(t0)}` }),
    h(
      "span",
      { class: "tl-track" },
      ticks(scale).map((k) =>
        k.fold
          ? h(
              "span",
              {
                class: "tl-fold",
                style: { left: pct(k.left), width: pct(k.w) },
                title: `${k.label} idle, folded`,
              },
              h("span", { text: k.label }),
            )
          : h("span", { class: "tl-tick", style: { left: pct(k.x) }, text: k.label }),
      ),
    ),
  );

  /** One row's element; `i` is its index in `rows` (arrow keys move by it). */
  const rowElement = (row, i) => {
    if (row.type === "note") {
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
          { class: "tl-label", style: { "padding-left": `${1.3 + row.depth * 0.9}rem` } },
          h("span", { class: "tl-note", text: row.label }),
        ),
        h("span", { class: "tl-track" }),
      );
    }
    if (row.type === "lane") {
      const timed = row.entries.filter((e) => e.startedAt !== null);
      const first = Math.min(...timed.map((e) => e.startedAt));
      const last = Math.max(...timed.map((e) => endOf(e, t)));
      return h(
        "div",
        { class: "tl-row tl-lane", role: "listitem" },
        h(
          "span",
          { class: "tl-label", style: { "padding-left": `${1.3 + row.depth * 0.9}rem` } },
          h("span", { class: "tl-lane-name", text: row.label }),
          row.winner ? h("span", { class: "tl-note", text: "winner" }) : null,
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
    const e = row.entry;
    const toggle = row.container
      ? h("button", {
          type: "button",
          class: "tl-toggle",
          "aria-expanded": String(!collapsed.has(e.id)),
          "aria-label": `${collapsed.has(e.id) ? "Expand" : "Collapse"} ${e.path}`,
          dataset: { toggle: String(e.id) },
          text: collapsed.has(e.id) ? "▸" : "▾",
          onclick: () => opts.onToggle(e),
        })
      : null;
    const main = h(
      "button",
      {
        type: "button",
        class: `tl-main${e.id === selectedId ? " selected" : ""}`,
        dataset: { id: String(e.id), path: e.path, status: e.status, index: String(i) },
        "aria-current": e.id === selectedId ? "true" : false,
        "aria-label": `${e.path}, ${e.kind}, ${e.status}${e.attempts.length > 1 ? `, ${e.attempts.length} attempts` : ""}`,
        onclick: () => opts.onSelect(e),
        onkeydown: (ev) => moveFocus(ev, i),
      },
      h(
        "span",
        { class: "tl-label", style: { "padding-left": `${1.3 + row.depth * 0.9}rem` } },
        h("span", { class: `tl-kind k-${e.kind}`, text: e.kind }),
        h("span", { class: "tl-name", text: e.name }),
        h("span", { class: `tl-note st-text-${e.status}`, text: note(e, t) }),
      ),
      h("span", { class: "tl-track" }, bars(e, scale, t)),
    );
    return h("div", { class: `tl-row tl-entry st-row-${e.status}`, role: "listitem" }, toggle, main);
  };

  const overlay = h("div", { class: "tl-overlay", "aria-hidden": "true" });
  for (const e of entries) {
    if (e.kind === "replay" && e.startedAt !== null)
      overlay.append(
        h("span", {
          class: "tl-vline tl-replay-line",
          style: { left: pct(scale.at(e.startedAt)) },
          title: `replay at ${clock(e.startedAt)}`,
        }),
      );
  }
  if (live)
    overlay.append(h("span", { class: "tl-vline tl-now", style: { left: pct(scale.at(t)) }, title: "now" }));

  const list = h("div", { class: "tl-rows", role: "list", "aria-label": "History entries" });
  const windowed = rows.length > WINDOW_AT;
  const previous = root.querySelector(".tl-scroller");
  const keptScroll = previous ? previous.scrollTop : null;
  const scroller = windowed ? h("div", { class: "tl-scroller" }, list) : null;
  root.replaceChildren(axis, h("div", { class: "tl-body" }, scroller ?? list, overlay), legend());

  /** Draws the rows in view (and a margin) between two spacers; a no-op when every row is drawn. */
  let drawn = "";
  let rowH = ROW_H;
  const spacer = (n) =>
    h("div", { class: "tl-spacer", "aria-hidden": "true", style: { height: `${n * rowH}px` } });
  const draw = () => {
    if (!scroller) return;
    const first = Math.max(0, Math.floor(scroller.scrollTop / rowH) - OVERSCAN);
    const last = Math.min(
      rows.length,
      Math.ceil((scroller.scrollTop + scroller.clientHeight) / rowH) + OVERSCAN,
    );
    if (drawn === `${first}:${last}`) return;
    drawn = `${first}:${last}`;
    fill(
      list,
      spacer(first),
      rows.slice(first, last).map((row, k) => rowElement(row, first + k)),
      spacer(rows.length - last),
    );
  };

  if (!scroller) {
    append(list, rows.map(rowElement));
  } else {
    // Measure one drawn row, then keep the reader's place (or bring the selected entry into view).
    fill(list, rowElement(rows[0], 0));
    rowH = list.firstElementChild.getBoundingClientRect().height || ROW_H;
    fill(list, spacer(rows.length)); // the full height, so the scroll position below holds
    const selectedAt = rows.findIndex((r) => r.type === "entry" && r.entry.id === selectedId);
    scroller.scrollTop =
      keptScroll ?? (selectedAt >= 0 ? Math.max(0, selectedAt * rowH - scroller.clientHeight / 3) : 0);
    draw();
    let queued = false;
    scroller.addEventListener("scroll", () => {
      if (queued) return;
      queued = true;
      requestAnimationFrame(() => {
        queued = false;
        draw();
      });
    });
    // The scroll bar narrows the rows' tracks: narrow the axis and the overlay alike.
    const bar = scroller.offsetWidth - scroller.clientWidth;
    if (bar > 0) {
      axis.style.paddingRight = `${bar}px`;
      overlay.style.right = `${10 + bar}px`;
    }
  }
  // Redrawn rows are new elements: put the keyboard focus back where it was (an entry or its toggle).
  if (focused.id) root.querySelector(`.tl-main[data-id="${CSS.escape(focused.id)}"]`)?.focus();
  else if (focused.toggle) root.querySelector(`[data-toggle="${CSS.escape(focused.toggle)}"]`)?.focus();

  /** Arrow keys move between entries (drawing them first when only some are drawn); → goes to the entry shown. */
  function moveFocus(ev, i) {
    if (ev.key === "ArrowRight") {
      const heading = document.querySelector("section.entry .entry-title");
      if (heading) {
        ev.preventDefault();
        heading.focus();
      }
      return;
    }
    const isEntry = (j) => rows[j]?.type === "entry";
    const step = (from, by) => {
      for (let j = from + by; j >= 0 && j < rows.length; j += by) if (isEntry(j)) return j;
      return -1;
    };
    const to = { ArrowDown: step(i, 1), ArrowUp: step(i, -1), Home: step(-1, 1), End: step(rows.length, -1) }[
      ev.key
    ];
    if (to === undefined || to < 0) return;
    ev.preventDefault();
    if (scroller) {
      const top = to * rowH;
      if (top < scroller.scrollTop) scroller.scrollTop = top;
      else if (top + rowH > scroller.scrollTop + scroller.clientHeight)
        scroller.scrollTop = top + rowH - scroller.clientHeight;
      draw();
    }
    list.querySelector(`.tl-main[data-index="${to}"]`)?.focus();
  }
}

function legend() {
  const item = (cls, text) =>
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
    h("span", { class: "tl-keys", text: "keys: ↑ ↓ move · Enter shows the entry · → goes to it" }),
  );
}
