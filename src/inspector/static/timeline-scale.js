// @ts-check
// The timeline's time axis (no DOM): times to percent of the track, drawn to scale with one exception:
// an idle stretch longer than all the rest of the run put together (a failed run replayed an hour later)
// is folded to a narrow band labelled with its length. And the tick marks along it.

import { duration } from "./format.js";

/** @typedef {import("./types.js").EntryBar} EntryBar */
/** @typedef {{ a: number, b: number, fold: boolean, x: number, w: number }} Piece */
/** @typedef {{ at: (t: number) => number, pieces: Piece[], t0: number, t1: number, openTime: number }} Scale */
/** @typedef {{ x: number, label: string, fold?: boolean, w?: number, left?: number }} Tick */

/** Percent of the track a folded stretch takes. */
const FOLD_PCT = 4;

/** When an entry's bar ends: its end, or `now` while it is still going. */
export function endOf(
  /** @type {Pick<EntryBar, "endedAt" | "status" | "startedAt">} */ e,
  /** @type {number} */ now,
) {
  if (e.endedAt !== null && e.endedAt !== undefined) return e.endedAt;
  if (e.status === "completed" || e.status === "failed" || e.status === "cancelled")
    return e.startedAt ?? now;
  return now;
}

/**
 * Maps times to percent of the track, folding idle stretches (more than a second, and longer than all
 * the rest) between the busy `intervals`.
 * @param {number} t0
 * @param {number} t1
 * @param {Array<[number | null, number]>} intervals
 * @returns {Scale}
 */
export function makeScale(t0, t1, intervals) {
  const total = Math.max(t1 - t0, 1);
  /** @type {Array<[number, number]>} */
  const merged = [];
  const timed = /** @type {Array<[number, number]>} */ (intervals.filter(([a]) => a !== null));
  for (const [a, b] of timed.sort((x, y) => x[0] - y[0])) {
    const last = merged.at(-1);
    if (last && a <= last[1]) last[1] = Math.max(last[1], b);
    else merged.push([a, b]);
  }
  /** @type {Array<[number, number]>} */
  const gaps = [];
  let cursor = t0;
  for (const [a, b] of merged) {
    if (a > cursor) gaps.push([cursor, a]);
    cursor = Math.max(cursor, b);
  }
  if (t1 > cursor) gaps.push([cursor, t1]);
  /** @type {Array<[number, number]>} */
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
  /** @type {Piece[]} */
  const pieces = [];
  cursor = t0;
  for (const [a, b] of folded) {
    if (a > cursor) pieces.push({ a: cursor, b: a, fold: false, x: 0, w: 0 });
    pieces.push({ a, b, fold: true, x: 0, w: 0 });
    cursor = b;
  }
  if (t1 > cursor || pieces.length === 0)
    pieces.push({ a: cursor, b: Math.max(t1, cursor + 1), fold: false, x: 0, w: 0 });
  const open = total - foldedTime;
  const room = 100 - FOLD_PCT * folded.length;
  let x = 0;
  for (const p of pieces) {
    p.x = x;
    p.w = p.fold ? FOLD_PCT : open > 0 ? ((p.b - p.a) / open) * room : room / pieces.length;
    x += p.w;
  }
  const at = (/** @type {number} */ t) => {
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
 * @param {Scale} scale
 * @returns {Tick[]}
 */
export function ticks(scale) {
  /** @type {Tick[]} */
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

/**
 * The scale of a run's timeline: from its creation (or first entry) to its end, or now while it runs.
 * Containers span their branches' idle gaps too (a join reopened by a replay an hour later): the entries
 * inside them say when there was work, so only those count for folding.
 * @param {readonly EntryBar[]} entries
 * @param {{ createdAt: number, finishedAt: number | null }} run
 * @param {boolean} live
 * @param {number} now
 */
export function runScale(entries, run, live, now) {
  let t0 = run.createdAt;
  for (const e of entries) if (e.startedAt !== null && e.startedAt < t0) t0 = e.startedAt;
  let t1 = live ? now : (run.finishedAt ?? t0);
  for (const e of entries) if (e.startedAt !== null) t1 = Math.max(t1, endOf(e, now));
  return makeScale(
    t0,
    t1,
    entries
      .filter((e) => e.startedAt !== null && e.kind !== "replay" && !e.container)
      .map((e) => /** @type {[number, number]} */ ([e.startedAt, endOf(e, now)])),
  );
}
