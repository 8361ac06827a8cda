// @ts-check
// The entry panel: one history entry whole. Timing, every attempt with its error and stack, input,
// output, the state before and after it, its detail; and "Replay from this entry" when replay is allowed.

import { Fragment, h } from "preact";
import { runHref } from "./api.js";
import { clock, duration } from "./format.js";
import { Badge, JsonBlock, Time } from "./parts.js";
import { StateDiff } from "./state-diff.js";

/** @typedef {import("./types.js").EntryWhole} EntryWhole */
/** @typedef {import("./types.js").ErrorInfo} ErrorInfo */
/**
 * @typedef {object} EntryProps
 * @property {EntryWhole | null} entry the chosen entry, or null when none is chosen
 * @property {((entry: EntryWhole) => void) | null} onReplay null hides the replay button
 * @property {import("preact").Ref<HTMLHeadingElement>} [titleRef] where → in the timeline moves focus
 */

/** A titled part of the panel. */
function Part(/** @type {{ title: string, children?: import("preact").ComponentChildren }} */ p) {
  return h("div", { class: "entry-part" }, h("h3", {}, p.title), p.children);
}

/** The panel of one entry (a placeholder while none is chosen). */
export function EntryPanel(/** @type {EntryProps} */ { entry: e, onReplay, titleRef }) {
  if (!e) {
    return h(
      "section",
      { class: "panel entry", "aria-label": "Entry" },
      h("h2", {}, "Entry"),
      h("p", { class: "muted" }, "Choose an entry in the timeline to see it whole."),
    );
  }
  const attempts = e.attempts ?? [];
  const detail = e.detail;
  const hasDetail = detail !== null && typeof detail === "object" && Object.keys(detail).length > 0;
  return h(
    "section",
    { class: "panel entry", "aria-label": "Entry" },
    h(
      "h2",
      { tabIndex: -1, class: "entry-title", ref: titleRef },
      h("span", { class: "mono" }, e.path),
      " ",
      h(Badge, { status: e.status }),
      h("span", { class: "muted" }, ` ${e.kind} #${e.id}`),
    ),
    h(
      "dl",
      { class: "facts" },
      h("dt", {}, "started"),
      h("dd", {}, h(Time, { ms: e.startedAt })),
      h("dt", {}, "ended"),
      h("dd", {}, h(Time, { ms: e.endedAt })),
      h("dt", {}, "took"),
      h("dd", {}, duration(e.durationMs)),
      attempts.length ? [h("dt", {}, "attempts"), h("dd", {}, String(attempts.length))] : null,
    ),
    e.kind === "child" ? h(ChildLink, { detail }) : null,
    onReplay && e.kind !== "replay"
      ? h(
          "div",
          { class: "actions" },
          h("button", { type: "button", onClick: () => onReplay(e) }, "Replay from this entry…"),
        )
      : null,
    e.error
      ? h(
          Part,
          { title: "Error" },
          h("p", { class: "error-text" }, h("strong", {}, `${e.error.name}: `), e.error.message),
          e.error.stack ? h("pre", { class: "stack" }, e.error.stack) : null,
        )
      : null,
    attempts.length ? h(Part, { title: "Attempts" }, h(Attempts, { attempts })) : null,
    e.input !== undefined && e.input !== null
      ? h(Part, { title: "Input" }, h(JsonBlock, { value: e.input, label: "Input" }))
      : null,
    e.output !== undefined && e.output !== null
      ? h(Part, { title: "Output" }, h(JsonBlock, { value: e.output, label: "Output" }))
      : null,
    h(Part, { title: "State before → after" }, h(StateDiff, { before: e.stateBefore, after: e.stateAfter })),
    hasDetail ? h(Part, { title: "Detail" }, h(JsonBlock, { value: detail, label: "Detail" })) : null,
  );
}

/** A ctx.child entry's link to the child run it started. */
function ChildLink(/** @type {{ detail: unknown }} */ { detail }) {
  const d = /** @type {{ workflow?: unknown, key?: unknown, detach?: unknown }} */ (detail ?? {});
  if (typeof d.workflow !== "string" || typeof d.key !== "string") return null;
  return h(
    "p",
    { class: "child-run" },
    d.detach ? "Started detached: " : "Child run: ",
    h("a", { href: runHref(d.workflow, d.key), class: "child-link" }, `${d.workflow}/${d.key}`),
  );
}

/** Every attempt of a step: status, start, how long, its error and stack, when the next one was due. */
function Attempts(/** @type {{ attempts: NonNullable<EntryWhole["attempts"]> }} */ { attempts }) {
  return h(
    "table",
    { class: "attempts" },
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["#", "status", "started", "took", "error"].map((t) => h("th", { scope: "col", key: t }, t)),
      ),
    ),
    h(
      "tbody",
      {},
      attempts.map((a) =>
        h(
          "tr",
          { class: `at-row-${a.status}`, key: a.n },
          h("td", {}, String(a.n)),
          h("td", {}, h(Badge, { status: a.status })),
          h("td", {}, h(Time, { ms: a.startedAt })),
          h("td", {}, a.endedAt ? duration(a.endedAt - a.startedAt) : "–"),
          h(
            "td",
            { class: "error-cell" },
            a.error ? h(AttemptError, { error: a.error }) : "",
            a.retryAt ? h("small", { class: "muted" }, ` next try ${clock(a.retryAt)}`) : null,
          ),
        ),
      ),
    ),
  );
}

function AttemptError(/** @type {{ error: ErrorInfo }} */ { error }) {
  return h(
    Fragment,
    {},
    h("span", { class: "error-text" }, `${error.name}: ${error.message}`),
    error.stack
      ? h("details", {}, h("summary", {}, "stack"), h("pre", { class: "stack" }, error.stack))
      : null,
  );
}
