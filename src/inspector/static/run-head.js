// @ts-check
// The run's header: workflow and key, status, version, tags, when it was created and finished, and its
// actions (Replay for a failed or cancelled run, Cancel while it is not finished) when they are allowed.

import { h } from "preact";
import { duration } from "./format.js";
import { Badge, Time } from "./parts.js";
import { Tags } from "./runs-view.js";

/** @typedef {import("./types.js").RunDetail} RunDetail */
/** @typedef {import("./types.js").RunActions} RunActions */
/**
 * @typedef {object} RunHeadProps
 * @property {RunDetail} run
 * @property {RunActions} can
 * @property {boolean} readOnly the server allows no actions (said in the header)
 * @property {() => void} onReplay
 * @property {() => void} onCancel
 */

/** The header of a run's view. */
export function RunHead(/** @type {RunHeadProps} */ { run, can, readOnly, onReplay, onCancel }) {
  return h(
    "header",
    { class: "run-head" },
    h(
      "div",
      { class: "run-title" },
      h("h1", {}, h("span", { class: "wf" }, run.workflow), " / ", h("span", { class: "key" }, run.key)),
      h(
        "span",
        { class: "run-status", "aria-label": `Status ${run.status}` },
        h(Badge, { status: run.status }),
      ),
      h("span", { class: "muted" }, `v${run.version}`),
      run.executing ? h("span", { class: "pill" }, "executing") : null,
      h(Tags, { tags: run.tags, href: (pair) => `#/?tags=${encodeURIComponent(pair)}` }),
    ),
    h(
      "p",
      { class: "run-meta" },
      "created ",
      h(Time, { ms: run.createdAt, rel: true }),
      run.finishedAt
        ? [
            " · finished ",
            h(Time, { ms: run.finishedAt }),
            ` · took ${duration(run.finishedAt - run.createdAt)}`,
          ]
        : [" · updated ", h(Time, { ms: run.updatedAt, rel: true })],
    ),
    h(
      "div",
      { class: "actions" },
      can.replay && (run.status === "failed" || run.status === "cancelled")
        ? h("button", { type: "button", class: "primary", onClick: onReplay }, "Replay…")
        : null,
      can.cancel ? h("button", { type: "button", class: "danger", onClick: onCancel }, "Cancel run…") : null,
      readOnly ? h("span", { class: "muted" }, "read-only: actions are off") : null,
    ),
  );
}
