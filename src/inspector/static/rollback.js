// @ts-check
// What a run's rollback did: the server's sentence, then each step that carries an undo in the order it is
// undone (latest completed first), and what became of it: undone, its handler failed (with the error),
// being undone, or not undone. Each opens the entry that shows it: the handler's, or the step's own when no
// handler ran.

import { h } from "preact";

/** @typedef {import("./types.js").EntryBar} EntryBar */
/** @typedef {import("./types.js").RollbackSummary} RollbackSummary */
/** @typedef {"undone" | "failed" | "undoing" | "not-undone"} StepState */

const WORDS = /** @type {Record<StepState, string>} */ ({
  undone: "undone",
  failed: "undo failed",
  undoing: "being undone",
  "not-undone": "not undone",
});

/**
 * Each step with an undo and its state, from the summary and the handlers' entries on the timeline.
 * @param {RollbackSummary} rollback
 * @param {readonly EntryBar[]} entries
 * @returns {Array<{ step: string, state: StepState, handler: EntryBar | undefined, entry: EntryBar | undefined }>}
 */
export function rollbackSteps(rollback, entries) {
  const handlers = new Map();
  for (const e of entries) {
    if (e.kind !== "rollback") continue;
    const step = typeof e.detail?.step === "string" ? e.detail.step : e.name;
    handlers.set(step, e);
  }
  return [...rollback.undone, ...rollback.notUndone].map((step) => {
    const handler = handlers.get(step);
    /** @type {StepState} */
    const state = rollback.undone.includes(step)
      ? "undone"
      : handler?.status === "failed"
        ? "failed"
        : handler && handler.status !== "cancelled"
          ? "undoing"
          : "not-undone";
    const entry = handler ?? entries.find((e) => e.kind === "step" && e.path === step);
    return { step, state, handler, entry };
  });
}

/**
 * The Rollback panel.
 * @param {{ rollback: RollbackSummary, entries: readonly EntryBar[], onSelect: (id: number) => void }} props
 */
export function RollbackPanel({ rollback, entries, onSelect }) {
  const steps = rollbackSteps(rollback, entries);
  return h(
    "section",
    { class: "panel run-rollback", "aria-label": "Rollback" },
    h("h2", {}, "Rollback"),
    h("p", { class: rollback.failed ? "error-text" : "" }, rollback.text),
    h(
      "ol",
      { class: "rb-steps" },
      steps.map(({ step, state, handler, entry }) =>
        h(
          "li",
          { class: `rb-step rb-${state}`, key: step, "data-step": step, "data-state": state },
          h("code", {}, step),
          " ",
          h("span", { class: `rb-state rb-${state}` }, WORDS[state]),
          state === "failed" && handler?.error
            ? h("span", { class: "error-text rb-error" }, `${handler.error.name}: ${handler.error.message}`)
            : null,
          entry
            ? h(
                "button",
                {
                  type: "button",
                  class: "link",
                  onClick: () => onSelect(entry.id),
                  title: handler ? `the handler's entry ${handler.path}` : `the step's entry ${step}`,
                },
                handler ? "handler entry" : "step entry",
              )
            : null,
        ),
      ),
    ),
  );
}
