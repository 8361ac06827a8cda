// @ts-check
// What the page needs to know about entry kinds and statuses: which entries open lanes (containers), which
// wait, which are points in time; which statuses are final. The one place that names kinds, until the
// API's entries carry these as flags of their own.

/** @typedef {import("./types.js").EntryBar} EntryBar */

const CONTAINERS = new Set(["join", "race", "loop"]);
const WAITS = new Set(["sleep", "queue"]);
const MARKS = new Set(["replay", "version"]);

/** A join, race or loop: its branches or iterations are lanes below it. */
export function isContainer(/** @type {Pick<EntryBar, "kind">} */ e) {
  return CONTAINERS.has(e.kind);
}

/** A sleep or queue wait: drawn hatched, its time is waiting, not work. */
export function isWait(/** @type {Pick<EntryBar, "kind">} */ e) {
  return WAITS.has(e.kind);
}

/** A replay or version marker: a point in time, not a span. */
export function isMark(/** @type {Pick<EntryBar, "kind">} */ e) {
  return MARKS.has(e.kind);
}

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** A run (or entry) status that never changes again. */
export function isTerminal(/** @type {string} */ status) {
  return TERMINAL.has(status);
}
