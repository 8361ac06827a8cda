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

/** "approve", "approve or reject", "a, b or c", each as code. */
function queueNames(/** @type {string[]} */ names) {
  return names.flatMap((q, i) => [
    i === 0 ? null : i === names.length - 1 ? " or " : ", ",
    h("code", { key: q }, q),
  ]);
}

/**
 * The run's waits, one per waiting entry: a wait on several queues (ctx.queue.next with a list) comes as
 * one WaitView per queue with the same entry, and is one wait on any of them.
 * @param {WaitView[]} waiting
 * @returns {Array<{ wait: WaitView, all: WaitView[] }>}
 */
export function groupWaits(waiting) {
  /** @type {Map<string, { wait: WaitView, all: WaitView[] }>} */
  const byEntry = new Map();
  for (const w of waiting) {
    const key = `${w.kind}:${w.entry}`;
    const seen = byEntry.get(key);
    if (seen) seen.all.push(w);
    else byEntry.set(key, { wait: w, all: [w] });
  }
  return [...byEntry.values()];
}

/** The form for one queue of a wait, or why there is none. */
function QueueForm(/** @type {{ wait: WaitView, onSend: WaitingProps["onSend"] }} */ { wait, onSend }) {
  const queue = wait.queue ?? "";
  return wait.messageSchema !== undefined
    ? h(MessageForm, { queue, schema: wait.messageSchema, onSend: (body) => onSend(queue, body) })
    : h(
        "p",
        { class: "muted" },
        `No process has published the schema of queue ${queue}, so there is no form.`,
      );
}

/** One thing the run waits on (all: one view per queue of a wait on several). */
function WaitItem(
  /** @type {{ wait: WaitView, all: WaitView[], canSend: boolean, onSend: WaitingProps["onSend"] }} */ props,
) {
  const { wait: w, all, canSend, onSend } = props;
  switch (w.kind) {
    case "queue": {
      const names = all.map((x) => x.queue ?? "");
      return h(
        "div",
        { class: "wait-item", "data-entry": w.entry },
        h("h3", {}, "Waiting for a message on ", queueNames(names)),
        h(
          "p",
          { class: "muted" },
          `in ${w.entry}`,
          names.length > 1 ? " · the first to arrive on any of them" : null,
          w.until ? [" · times out ", h(Until, { ms: w.until }), ` (${clock(w.until)})`] : " · no timeout",
        ),
        canSend
          ? all.length === 1
            ? h(QueueForm, { wait: w, onSend })
            : all.map((x) =>
                h(
                  "div",
                  { class: "wait-queue", key: x.queue, "data-queue": x.queue },
                  h("h4", {}, "On ", h("code", {}, x.queue)),
                  h(QueueForm, { wait: x, onSend }),
                ),
              )
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
    groupWaits(waiting).map(({ wait, all }) =>
      h(WaitItem, { key: `${wait.kind}:${wait.entry}`, wait, all, canSend, onSend }),
    ),
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
