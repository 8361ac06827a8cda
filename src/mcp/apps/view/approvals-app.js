// @ts-check
// The approvals view: review_approvals' answer as one card per waiting run, each with the inspector's form
// built from its queue's JSON Schema (Approve and Reject for a decision). Approve sends the message with the
// server's send_message through the host, waits for the run with wait_for_run, and shows where it ended.
// A read-only server's answer says canAnswer: false, and the cards show no form.

import { h, render } from "preact";
import { MessageForm } from "../../../inspector/static/message-form.js";
import { Badge, JsonBlock } from "../../../inspector/static/parts.js";
import { answerText, callTool, randomKey } from "./tools.js";

/** @typedef {import("@modelcontextprotocol/ext-apps").App} App */
/**
 * @typedef {object} Approval one wait, as review_approvals answers it
 * @property {string} workflow
 * @property {string} key
 * @property {string} entry
 * @property {string} queue
 * @property {string | null} until
 * @property {unknown} messageSchema
 * @property {unknown} input
 */
/** @typedef {{ status: string, text: string, output: unknown }} Outcome */

/**
 * Shows review_approvals' answer in `main`.
 * @param {App} app
 * @param {HTMLElement} main
 * @param {{ approvals: Approval[], canAnswer: boolean }} answer
 */
export function showApprovals(app, main, answer) {
  /** Where each answered run ended, by "workflow/key". @type {Map<string, Outcome>} */
  const outcomes = new Map();

  async function send(/** @type {Approval} */ a, /** @type {unknown} */ body) {
    const address = { workflow: a.workflow, key: a.key };
    const sent = await callTool(app, "send_message", {
      ...address,
      queue: a.queue,
      body,
      idempotencyKey: randomKey(),
    });
    const waited = await callTool(app, "wait_for_run", { ...address, until: "finished", timeoutSeconds: 30 });
    const run = /** @type {any} */ (waited.structuredContent);
    outcomes.set(`${a.workflow}/${a.key}`, {
      status: run?.status ?? "unknown",
      text: answerText(sent),
      output: run?.run?.output,
    });
    draw();
    return answerText(sent);
  }

  function Card(/** @type {{ a: Approval }} */ { a }) {
    const id = `${a.workflow}/${a.key}`;
    const done = outcomes.get(id);
    return h(
      "section",
      { class: "panel approval", "aria-label": `Approval ${id}`, "data-run": id },
      h(
        "h2",
        {},
        h("span", { class: "wf" }, a.workflow),
        " / ",
        h("span", { class: "key" }, a.key),
        " ",
        done ? h(Badge, { status: done.status }) : h(Badge, { status: "waiting" }),
      ),
      h(
        "p",
        { class: "muted" },
        "waits in ",
        h("code", {}, a.entry),
        " for a message on ",
        h("code", {}, a.queue),
        a.until ? ` · times out ${a.until}` : " · no timeout",
      ),
      h(
        "details",
        { open: true },
        h("summary", {}, "Input"),
        h(JsonBlock, { value: a.input, label: "Input" }),
      ),
      done
        ? h(
            "div",
            { class: "app-notice", role: "status" },
            h("p", {}, `${done.text} The run is ${done.status}.`),
            done.output !== undefined && done.output !== null
              ? h(JsonBlock, { value: done.output, label: "Output" })
              : null,
          )
        : answer.canAnswer && a.messageSchema
          ? h(MessageForm, { queue: a.queue, schema: a.messageSchema, onSend: (body) => send(a, body) })
          : answer.canAnswer
            ? h("p", { class: "muted" }, "No process has published this queue's schema, so there is no form.")
            : h(
                "p",
                { class: "muted" },
                "This server is read-only: answer it with a writable Waymark server.",
              ),
    );
  }

  function draw() {
    render(
      h(
        "div",
        { class: "app-approvals" },
        h("h1", {}, "Waiting for a decision"),
        answer.approvals.length
          ? answer.approvals.map((a) => h(Card, { a, key: `${a.workflow}/${a.key}/${a.entry}` }))
          : h("p", { class: "muted" }, "No run waits for a message."),
      ),
      main,
    );
  }
  draw();
}
