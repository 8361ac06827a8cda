// @ts-check
// The run view: the inspector's RunView (timeline with attempts, diagnosis with evidence, state before and
// after the chosen entry, the form of a waiting run) drawn from view_run's answer. Its buttons call the
// server's own tools through the host: send_message, replay_run (its dry run shown first, then confirmed
// here) and cancel_run; after each the view shows the tool's answer and reads the run again.

import { h, render } from "preact";
import { ReplayPreview } from "../../../inspector/static/replay-plan.js";
import { defaultEntry } from "../../../inspector/static/run.js";
import { RunView } from "../../../inspector/static/run-view.js";
import { answerText, callTool, randomKey } from "./tools.js";

/** @typedef {import("@modelcontextprotocol/ext-apps").App} App */
/** @typedef {import("../../../inspector/static/types.js").ReplayPlan} ReplayPlan */
/**
 * What the view waits to be confirmed, or last said.
 * @typedef {{ kind: "replay", plan: ReplayPlan, fromStep: string | number | null }
 *   | { kind: "cancel" }
 *   | { kind: "notice", text: string, error: boolean }
 *   | null} Pending
 */

/**
 * Shows one run in `main` and keeps it current after every action.
 * @param {App} app
 * @param {HTMLElement} main
 * @param {{ workflow: string, key: string }} address
 * @param {any} given diagnose_run's answer when the view opened on it (its diagnosis is shown), else null
 */
export function showRun(app, main, address, given) {
  /** @type {any} */
  let data = null;
  /** @type {number | null} */
  let selectedId = null;
  /** @type {Pending} */
  let pending = null;
  const args = { workflow: address.workflow, key: address.key };

  async function load(/** @type {number | null} */ entry) {
    const res = await callTool(app, "view_run", entry === null ? args : { ...args, entry });
    data = res.structuredContent;
    const entries = data.history.entries;
    if (entry === null && selectedId === null) {
      const first = defaultEntry(entries, data.run.run);
      if (first !== null) {
        selectedId = first;
        return load(first);
      }
    }
    selectedId = entry;
    draw();
  }

  const fail = (/** @type {unknown} */ err) => {
    pending = { kind: "notice", text: /** @type {Error} */ (err).message ?? String(err), error: true };
    draw();
  };
  /**
   * Reads the run again after an action, which may have discarded the chosen entry (a replay drops the
   * entries from its start on): the same entry when it is still there, else the entry at the same path in
   * the new history, else the run's default one.
   */
  async function reload() {
    const entries = data?.history.entries ?? [];
    const path = entries.find((/** @type {any} */ e) => e.id === selectedId)?.path ?? data?.entry?.path;
    const res = await callTool(app, "view_run", args);
    data = res.structuredContent;
    const fresh = data.history.entries;
    const kept = fresh.find((/** @type {any} */ e) => e.id === selectedId);
    const samePath = fresh.findLast((/** @type {any} */ e) => path !== undefined && e.path === path);
    const next = kept?.id ?? samePath?.id ?? defaultEntry(fresh, data.run.run);
    selectedId = null;
    if (next === null || next === undefined) return draw();
    selectedId = next;
    // The entry may be discarded between the two reads (the replay runs on): the run is then shown without it.
    return load(next).catch(() => {
      selectedId = null;
      draw();
    });
  }

  /** After an action: show the tool's answer, read the run again. */
  const after = (/** @type {string} */ text) => {
    pending = { kind: "notice", text, error: false };
    return reload().catch(fail);
  };

  async function preview(/** @type {string | number | null} */ fromStep) {
    const res = await callTool(app, "replay_run", {
      ...args,
      dryRun: true,
      ...(fromStep === null ? {} : { fromStep }),
    });
    const plan = /** @type {any} */ (res.structuredContent);
    const version = plan.version ?? { from: data.run.run.version, to: data.run.run.version };
    pending = { kind: "replay", plan: { ...plan, version }, fromStep };
    draw();
  }

  async function replay(/** @type {string | number | null} */ fromStep) {
    pending = null;
    const res = await callTool(app, "replay_run", {
      ...args,
      dryRun: false,
      ...(fromStep === null ? {} : { fromStep }),
    });
    await after(answerText(res));
  }

  async function cancel() {
    pending = null;
    const res = await callTool(app, "cancel_run", args);
    await after(answerText(res));
  }

  /** @type {import("../../../inspector/static/run-view.js").RunViewActions} */
  const actions = {
    select: (id) => void load(id).catch(fail),
    replay: (fromStep) => void preview(fromStep).catch(fail),
    cancel: () => {
      pending = { kind: "cancel" };
      draw();
    },
    async send(queue, body) {
      const res = await callTool(app, "send_message", { ...args, queue, body, idempotencyKey: randomKey() });
      const line = answerText(res);
      await after(line);
      return line;
    },
  };

  function Pending() {
    if (!pending) return null;
    const close = () => {
      pending = null;
      draw();
    };
    if (pending.kind === "notice")
      return h(
        "div",
        { class: `app-notice${pending.error ? " error" : ""}`, role: pending.error ? "alert" : "status" },
        h("p", {}, pending.text),
        h("button", { type: "button", class: "ghost", onClick: close }, "Dismiss"),
      );
    const label = `${address.workflow}/${address.key}`;
    if (pending.kind === "cancel")
      return h(
        "section",
        { class: "panel app-confirm", "aria-label": "Confirm cancel" },
        h("h2", {}, `Cancel ${label}?`),
        h("p", {}, "Waits and timers are dropped and the history is kept; a cancelled run can be replayed."),
        h(
          "div",
          { class: "buttons" },
          h(
            "button",
            { type: "button", class: "danger", onClick: () => void cancel().catch(fail) },
            "Cancel the run",
          ),
          h("button", { type: "button", onClick: close }, "Keep it"),
        ),
      );
    const { plan, fromStep } = pending;
    return h(
      "section",
      { class: "panel app-confirm", "aria-label": "Replay preview" },
      h("h2", {}, `Replay ${label}${plan.from ? ` from ${plan.from.path}` : ""}?`),
      h(ReplayPreview, { plan }),
      h(
        "div",
        { class: "buttons" },
        h(
          "button",
          { type: "button", class: "primary", onClick: () => void replay(fromStep).catch(fail) },
          "Replay now",
        ),
        h("button", { type: "button", onClick: close }, "Don't replay"),
      ),
    );
  }

  function draw() {
    if (!data) {
      render(h(Pending, {}), main);
      return;
    }
    const diagnosis = given ?? data.diagnosis;
    render(
      h(
        "div",
        { class: "app-run" },
        h(Pending, {}),
        h(RunView, {
          run: data.run,
          history: data.history,
          selectedId,
          entry: data.entry,
          diagnosis: diagnosis ? { state: "ready", diagnosis } : null,
          now: data.run.serverNow,
          readOnly: data.readOnly,
          actions,
        }),
      ),
      main,
    );
  }

  load(null).catch(fail);
}
