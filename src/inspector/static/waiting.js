// @ts-check
// What a run waits on: a message on a queue (with the form built from the queue's schema, when sending
// is allowed), the end of a sleep, or the next attempt of a step; and forms for the workflow's other
// queues, folded away.

import { h } from "preact";
import { runHref } from "./api.js";
import { assertNever } from "./assert.js";
import { clock, relative } from "./format.js";
import { MessageForm } from "./message-form.js";

/** @typedef {import("./types.js").WaitView} WaitView */
/** @typedef {import("./types.js").QueueView} QueueView */
/**
 * @typedef {object} WaitingProps
 * @property {WaitView[]} waiting
 * @property {QueueView[]} queues the queues of the run's workflow version
 * @property {boolean} canSend
 * @property {(queue: string, body: unknown) => Promise<string>} onSend
 */

/** "in 2h", updated whenever the panel draws. */
function Until(/** @type {{ ms: number | null }} */ { ms }) {
  return ms ? h("span", { class: "rel" }, relative(ms)) : null;
}

/** One thing the run waits on. */
function WaitItem(/** @type {{ wait: WaitView, canSend: boolean, onSend: WaitingProps["onSend"] }} */ props) {
  const { wait: w, canSend, onSend } = props;
  switch (w.kind) {
    case "queue": {
      const queue = w.queue ?? "";
      return h(
        "div",
        { class: "wait-item" },
        h("h3", {}, "Waiting for a message on ", h("code", {}, queue)),
        h(
          "p",
          { class: "muted" },
          `in ${w.entry}`,
          w.until ? [" · times out ", h(Until, { ms: w.until }), ` (${clock(w.until)})`] : " · no timeout",
        ),
        canSend && w.messageSchema !== undefined
          ? h(MessageForm, { queue, schema: w.messageSchema, onSend: (body) => onSend(queue, body) })
          : canSend
            ? h("p", { class: "muted" }, "No process has published this queue's schema, so there is no form.")
            : null,
      );
    }
    case "sleep":
      return h(
        "div",
        { class: "wait-item" },
        h("h3", {}, "Sleeping in ", h("code", {}, w.entry)),
        h("p", {}, `until ${clock(w.until)} · `, h(Until, { ms: w.until })),
      );
    case "retry":
      return h(
        "div",
        { class: "wait-item" },
        h("h3", {}, "Retrying ", h("code", {}, w.entry)),
        h("p", {}, `next attempt at ${clock(w.until)} · `, h(Until, { ms: w.until })),
      );
    case "child": {
      const [workflow, ...rest] = (w.child ?? "").split("/");
      return h(
        "div",
        { class: "wait-item" },
        h("h3", {}, "Waiting in ", h("code", {}, w.entry), " for child run"),
        h("p", {}, h("a", { href: runHref(workflow ?? "", rest.join("/")), class: "child-link" }, w.child)),
      );
    }
    default:
      return assertNever(w.kind);
  }
}

/** The waiting panel; nothing when the run waits on nothing and no message can be sent. */
export function WaitingPanel(/** @type {WaitingProps} */ { waiting, queues, canSend, onSend }) {
  const others = canSend ? queues.filter((q) => !waiting.some((w) => w.queue === q.name)) : [];
  if (waiting.length === 0 && others.length === 0) return null;
  return h(
    "section",
    { class: "panel waiting", "aria-label": "What the run waits on" },
    waiting.length ? h("h2", {}, "Waiting on") : null,
    waiting.map((w) => h(WaitItem, { key: `${w.kind}:${w.entry}`, wait: w, canSend, onSend })),
    others.length
      ? h(
          "details",
          { class: "send-other" },
          h("summary", {}, waiting.length ? "Send to another queue" : "Send a message"),
          others.map((q) =>
            h(
              "div",
              { class: "wait-item", key: q.name },
              h("h3", {}, h("code", {}, q.name)),
              h(MessageForm, { queue: q.name, schema: q.schema, onSend: (body) => onSend(q.name, body) }),
            ),
          ),
        )
      : null,
  );
}
