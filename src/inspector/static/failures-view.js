// @ts-check
// The failures panel of the runs page: failed and retrying runs of the last 7 days grouped by signature (as
// list_failures groups them), each group with its step, error, count and newest keys, and, unless the server
// is read-only, a "Replay all N" button that opens the bulk replay's preview (bulk-replay.js).

import { h } from "preact";
import { runHref } from "./api.js";
import { plural } from "./format.js";

/** @typedef {import("./types.js").FailuresAnswer} FailuresAnswer */
/** @typedef {FailuresAnswer["failures"][number]} FailureGroup */

/**
 * The panel; nothing when no run is failing.
 * @param {{ failures: FailureGroup[], readOnly: boolean, onReplayAll: (group: FailureGroup) => void }} props
 */
export function FailuresPanel({ failures, readOnly, onReplayAll }) {
  if (failures.length === 0) return null;
  return h(
    "section",
    { class: "failures", "aria-label": "Failures by signature" },
    h("h2", null, "Failures by signature"),
    h(
      "table",
      { class: "failures-table" },
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ...["Runs", "Workflow", "Step", "Error", "Newest runs", ""].map((t) =>
            h("th", { scope: "col" }, t),
          ),
        ),
      ),
      h(
        "tbody",
        null,
        failures.map((g) =>
          h(
            "tr",
            { key: g.signature, "data-signature": g.signature },
            h(
              "td",
              { class: "failure-count" },
              String(g.count),
              g.retrying ? h("span", { class: "muted" }, ` (${g.retrying} retrying)`) : null,
            ),
            h("td", null, g.workflow),
            h("td", null, h("code", null, g.entry)),
            h("td", { class: "failure-error" }, `${g.errorName}: `, g.pattern),
            h(
              "td",
              { class: "failure-keys" },
              g.keys.map((k, i) => [i > 0 ? ", " : "", h("a", { key: k, href: runHref(g.workflow, k) }, k)]),
            ),
            h(
              "td",
              null,
              readOnly
                ? null
                : h(
                    "button",
                    {
                      type: "button",
                      class: "replay-all",
                      title: `Dry run first: shows what replaying ${plural(g.count, "this run", "these runs")} would do`,
                      onClick: () => onReplayAll(g),
                    },
                    `Replay all ${g.count}`,
                  ),
            ),
          ),
        ),
      ),
    ),
  );
}
