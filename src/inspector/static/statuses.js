// @ts-check
// What the page needs to know about statuses. (Kinds it needs to know nothing about: the API's entries
// say whether each is a container, a wait or a marker.)

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** A run (or entry) status that never changes again. */
export function isTerminal(/** @type {string} */ status) {
  return TERMINAL.has(status);
}
