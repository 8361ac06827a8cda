// @ts-check
// A run's whole view, from data given to it: the header, the diagnosis of a failure, the error, what it
// waits on, the timeline beside the chosen entry, and its values. It fetches nothing: run.js (or another
// page, such as an MCP Apps view) loads the data and says what the buttons do.

import { h } from "preact";
import { useRef } from "preact/hooks";
import { runHref } from "./api.js";
import { ConcurrencyPanel } from "./concurrency.js";
import { DiagnosisPanel } from "./diagnosis.js";
import { EntryPanel } from "./entry.js";
import { RollbackPanel } from "./rollback.js";
import { RunError } from "./run-error.js";
import { RunHead } from "./run-head.js";
import { RunValues } from "./run-values.js";
import { Timeline } from "./timeline.js";
import { WaitingPanel } from "./waiting.js";
import { WritesPanel } from "./writes.js";

/** @typedef {import("./types.js").RunAnswer} RunAnswer */
/** @typedef {import("./types.js").HistoryAnswer} HistoryAnswer */
/** @typedef {import("./types.js").EntryWhole} EntryWhole */
/** @typedef {import("./diagnosis.js").DiagnosisState} DiagnosisState */
/**
 * What the view's buttons and links do.
 * @typedef {object} RunViewActions
 * @property {(id: number) => void} select shows an entry
 * @property {(fromStep: string | number | null, path?: string) => void} replay previews a replay, then
 *   asks before doing it (null: from the failed entry)
 * @property {() => void} cancel asks, then cancels the run
 * @property {(queue: string, body: unknown) => Promise<string>} send sends a message; resolves with a
 *   line to show
 */
/**
 * Everything the view shows.
 * @typedef {object} RunViewState
 * @property {RunAnswer} run
 * @property {HistoryAnswer} history
 * @property {number | null} selectedId
 * @property {EntryWhole | null} entry the chosen entry whole (null while none is chosen)
 * @property {DiagnosisState | null} diagnosis null when the run did not fail
 * @property {number} now the server's clock, for bars that are still growing
 * @property {boolean} readOnly
 */

/** A run's view. */
export function RunView(/** @type {RunViewState & { actions: RunViewActions }} */ props) {
  const { run: answer, history, selectedId, entry, diagnosis, now, readOnly, actions } = props;
  const { run, waiting, queues, can, parent, concurrency, rollback } = answer;
  const entryTitle = useRef(/** @type {HTMLHeadingElement | null} */ (null));
  const select = (/** @type {number | string} */ ref) => {
    const e = history.entries.find((x) => x.id === ref || x.path === ref);
    if (e) actions.select(e.id);
  };
  return h(
    "div",
    { class: "run-view" },
    h(
      "p",
      { class: "crumbs" },
      h("a", { href: "#/" }, "← All runs"),
      parent
        ? [
            " · started by ",
            h(
              "a",
              { href: runHref(parent.workflow, parent.key), class: "parent-link" },
              `${parent.workflow}/${parent.key}`,
            ),
            ` (${parent.status})`,
          ]
        : null,
    ),
    h(RunHead, {
      run,
      can,
      readOnly,
      onReplay: () => actions.replay(null),
      onCancel: actions.cancel,
    }),
    diagnosis
      ? h(DiagnosisPanel, {
          diagnosis,
          onSelect: select,
          onReplay: (from) => actions.replay(from),
          canReplay: can.replay,
        })
      : null,
    h(RunError, { error: run.error }),
    h(ConcurrencyPanel, { concurrency, workflow: run.workflow }),
    rollback ? h(RollbackPanel, { rollback, entries: history.entries, onSelect: actions.select }) : null,
    h(WaitingPanel, { waiting, queues, canSend: can.send, onSend: actions.send }),
    h(
      "div",
      { class: "run-body" },
      h(
        "section",
        { class: "panel timeline-panel", "aria-label": "Timeline" },
        h("h2", {}, "Timeline"),
        history.truncated
          ? h(
              "p",
              { class: "muted" },
              `The first ${history.entries.length.toLocaleString("en")} entries are drawn; page through the rest with the MCP tool get_history.`,
            )
          : null,
        h(Timeline, {
          entries: history.entries,
          run,
          now,
          selectedId,
          onSelect: (e) => actions.select(e.id),
          onGoToEntry: () => entryTitle.current?.focus(),
        }),
      ),
      h(EntryPanel, {
        entry,
        onReplay: can.replay ? (e) => actions.replay(e.id, e.path) : null,
        titleRef: entryTitle,
      }),
    ),
    h(RunValues, { run }),
    h(WritesPanel, { writes: answer.writes }),
  );
}
