// @ts-check
// The approvals view: review_approvals' answer as one card per wait, each with the inspector's form built
// from its queue's JSON Schema (Approve and Reject for a decision); a wait on several queues is one card
// naming them all, with a form per queue. Approve sends the message with the server's send_message through
// the host, waits for the run with wait_for_run, and shows where it ended (a batch that still lacks messages
// only counts the one sent). A read-only server's answer says canAnswer: false, and the cards show no form.

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
 * @property {string} queue the first of queues
 * @property {Array<{ queue: string, messageSchema: unknown }>} [queues] every queue the wait takes a message
 *   from, each with its schema (absent from an older server's answer: then queue and messageSchema)
 * @property {{ count: number, arrived: number } | null} [batch] a batch wait's count and arrivals
 * @property {string | null} until
 * @property {unknown} messageSchema
 * @property {unknown} input
 */
/** @typedef {{ status: string, text: string, output: unknown }} Outcome */

/** The queues of a wait, each with its schema. */
function queuesOf(/** @type {Approval} */ a) {
  return a.queues?.length ? a.queues : [{ queue: a.queue, messageSchema: a.messageSchema }];
}

/** "approve", "approve or reject", "a, b or c", each as code. */
function queueNames(/** @type {string[]} */ names) {
  return names.flatMap((q, i) => [
    i === 0 ? null : i === names.length - 1 ? " or " : ", ",
    h("code", { key: q }, q),
  ]);
}

/**
 * Shows review_approvals' answer in `main`.
 * @param {App} app
 * @param {HTMLElement} main
 * @param {{ approvals: Approval[], canAnswer: boolean }} answer
 */
export function showApprovals(app, main, answer) {
  /** Where each answered run ended, by "workflow/key". @type {Map<string, Outcome>} */
  const outcomes = new Map();
  /** Messages a batch wait holds, counting those sent from here, by "workflow/key/entry". @type {Map<string, number>} */
  const arrived = new Map();

  async function send(/** @type {Approval} */ a, /** @type {string} */ queue, /** @type {unknown} */ body) {
    const address = { workflow: a.workflow, key: a.key };
    const sent = await callTool(app, "send_message", {
      ...address,
      queue,
      body,
      idempotencyKey: randomKey(),
    });
    if (a.batch) {
      // A batch that still lacks messages goes on waiting: say how many it has, and keep the form.
      const id = `${a.workflow}/${a.key}/${a.entry}`;
      const have = (arrived.get(id) ?? a.batch.arrived) + 1;
      arrived.set(id, have);
      if (have < a.batch.count) {
        draw();
        return `${answerText(sent)} ${have} of ${a.batch.count} arrived.`;
      }
    }
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

  /** The form for one queue of a wait, or why there is none. */
  function QueueForm(/** @type {{ a: Approval, queue: string, schema: unknown }} */ { a, queue, schema }) {
    return schema
      ? h(MessageForm, { queue, schema, onSend: (body) => send(a, queue, body) })
      : h("p", { class: "muted" }, "No process has published this queue's schema, so there is no form.");
  }

  function Card(/** @type {{ a: Approval }} */ { a }) {
    const id = `${a.workflow}/${a.key}`;
    const done = outcomes.get(id);
    const queues = queuesOf(a);
    const have = a.batch ? (arrived.get(`${id}/${a.entry}`) ?? a.batch.arrived) : 0;
    return h(
      "section",
      { class: "panel approval", "aria-label": `Approval ${id}`, "data-run": id, "data-entry": a.entry },
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
        { class: "muted wait-on" },
        done ? "waited in " : "waits in ",
        h("code", {}, a.entry),
        a.batch ? ` for a batch of ${a.batch.count} on ` : " for a message on ",
        queueNames(queues.map((q) => q.queue)),
        a.batch ? ` · ${have} of ${a.batch.count} arrived` : null,
        queues.length > 1 ? " · the first to arrive on any of them" : null,
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
        : answer.canAnswer
          ? queues.length === 1
            ? h(QueueForm, { a, queue: a.queue, schema: queues[0]?.messageSchema })
            : queues.map((q) =>
                h(
                  "div",
                  { class: "wait-queue", key: q.queue, "data-queue": q.queue },
                  h("h3", {}, "On ", h("code", {}, q.queue)),
                  h(QueueForm, { a, queue: q.queue, schema: q.messageSchema }),
                ),
              )
          : h("p", { class: "muted" }, "This server is read-only: answer it with a writable Waymark server."),
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
