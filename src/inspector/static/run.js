// @ts-check
// One run's page: loads the run, its history, the chosen entry and (for a failed run) its diagnosis from
// the API, keeps them in one state object, and draws RunView (run-view.js) from it after every change.
// Follows the run's events and re-reads it, so the page moves on as steps happen. The buttons' actions
// (send a message, replay after its dry run, cancel) go through the API and the app's dialogs.

import { h, render } from "preact";
import { api, debounce, follow, randomKey, runHref, runPath } from "./api.js";
import { now } from "./format.js";
import { ReplayPreview } from "./replay-plan.js";
import { RunView } from "./run-view.js";
import { isTerminal } from "./statuses.js";

/** @typedef {import("./types.js").RunAnswer} RunAnswer */
/** @typedef {import("./types.js").HistoryAnswer} HistoryAnswer */
/** @typedef {import("./types.js").EntryBar} EntryBar */
/** @typedef {import("./types.js").EntryWhole} EntryWhole */
/** @typedef {import("./types.js").EntryAnswer} EntryAnswer */
/** @typedef {import("./types.js").DiagnosisAnswer} DiagnosisAnswer */
/** @typedef {import("./types.js").ReplayAnswer} ReplayAnswer */
/** @typedef {import("./types.js").ReplayPlan} ReplayPlan */
/** @typedef {import("./types.js").SendAnswer} SendAnswer */
/** @typedef {import("./types.js").CancelAnswer} CancelAnswer */
/** @typedef {import("./app.js").AppContext} AppContext */
/** @typedef {import("./run-view.js").RunViewState} RunViewState */

/** Redraws of a live run's growing bars: every second, every fifth second past this many entries. */
const BUSY_HISTORY = 500;

/**
 * The entry to show first: the innermost failed entry of a failed run, else the one the run waits in,
 * else none.
 * @param {readonly EntryBar[]} entries
 * @param {{ status: string, waiting: Array<{ entry: string }> | null }} run
 */
export function defaultEntry(entries, run) {
  const failed = entries.filter((e) => e.status === "failed" && e.scope !== "~replay");
  const inner = failed.filter((f) => !failed.some((g) => g !== f && g.scope.startsWith(f.path)));
  if (run.status === "failed" && inner.length) return Math.min(...inner.map((e) => e.id));
  const waiting = run.waiting?.[0]?.entry;
  return entries.find((e) => e.path === waiting)?.id ?? null;
}

/** What changes in an entry's bar when the entry itself changed (so its whole is read again). */
export function entryVersion(/** @type {EntryBar} */ bar) {
  return JSON.stringify([bar.id, bar.status, bar.endedAt, bar.attempts.length]);
}

/**
 * Shows a run in `main`; returns a function that stops following it.
 * @param {HTMLElement} main
 * @param {string} workflow
 * @param {string} key
 * @param {URLSearchParams} params
 * @param {AppContext} ctx
 */
export function showRun(main, workflow, key, params, ctx) {
  const base = runPath(workflow, key);
  const label = `${workflow}/${key}`;
  /** @type {Omit<RunViewState, "run" | "history"> & { run: RunAnswer | null, history: HistoryAnswer | null }} */
  const state = {
    run: null,
    history: null,
    selectedId: params.has("entry") ? Number(params.get("entry")) : null,
    entry: null,
    diagnosis: null,
    now: now(),
    readOnly: ctx.meta.readOnly,
  };
  /** Which version of the chosen entry `state.entry` is, and which run update the diagnosis is of. */
  let entryRead = "";
  /** @type {number | null} */
  let diagnosedAt = null;
  let stopped = false;

  /** @type {import("./run-view.js").RunViewActions} */
  const actions = {
    select(id) {
      state.selectedId = id;
      history.replaceState(null, "", runHref(workflow, key, id));
      draw();
      loadEntry().catch(ctx.fail);
    },
    replay: (fromStep, path) => void replay(fromStep, path),
    cancel: () => void cancel(),
    send,
  };

  function draw() {
    if (stopped || !state.run || !state.history) return;
    render(h(RunView, { ...state, run: state.run, history: state.history, actions }), main);
  }

  async function load() {
    const [run, hist] = await Promise.all([api(base), api(`${base}/history`)]);
    state.run = /** @type {RunAnswer} */ (run);
    state.history = /** @type {HistoryAnswer} */ (hist);
    state.now = now();
    const entries = state.history.entries;
    if (state.selectedId === null || !entries.some((e) => e.id === state.selectedId))
      state.selectedId = defaultEntry(entries, state.run.run);
    draw();
    await Promise.all([loadDiagnosis(), loadEntry()]);
  }

  async function loadDiagnosis() {
    const run = state.run?.run;
    if (run?.status !== "failed") {
      state.diagnosis = null;
      diagnosedAt = null;
      return;
    }
    if (diagnosedAt === run.updatedAt) return;
    diagnosedAt = run.updatedAt;
    state.diagnosis = { state: "loading" };
    draw();
    try {
      const res = /** @type {DiagnosisAnswer} */ (await api(`${base}/diagnosis`));
      state.diagnosis = { state: "ready", diagnosis: res.diagnosis };
    } catch (err) {
      state.diagnosis = { state: "error", message: /** @type {Error} */ (err).message };
    }
    draw();
  }

  async function loadEntry() {
    const bar = state.history?.entries.find((e) => e.id === state.selectedId);
    if (!bar) {
      state.entry = null;
      entryRead = "";
      draw();
      return;
    }
    const version = entryVersion(bar);
    if (version !== entryRead || !state.entry) {
      const res = /** @type {EntryAnswer} */ (await api(`${base}/entries/${bar.id}`));
      if (state.selectedId !== bar.id) return; // another entry was chosen meanwhile
      state.entry = res.entry;
      entryRead = version;
    }
    draw();
  }

  /** @returns {Promise<string>} */
  async function send(/** @type {string} */ queue, /** @type {unknown} */ body) {
    const res = /** @type {SendAnswer} */ (
      await api(`${base}/messages`, { queue, body, idempotencyKey: randomKey() })
    );
    refresh();
    return res.duplicate ? "Already sent." : `Sent as message #${res.messageId}; the run picks it up now.`;
  }

  async function showError(/** @type {unknown} */ err) {
    await ctx.dialog(`Replay ${label}`, h("p", { class: "error-text" }, /** @type {Error} */ (err).message), [
      { label: "Close" },
    ]);
  }

  async function replay(
    /** @type {string | number | null} */ fromStep,
    /** @type {string | undefined} */ path,
  ) {
    const args = fromStep === null ? {} : { fromStep };
    /** @type {ReplayPlan} */
    let plan;
    try {
      plan = /** @type {ReplayPlan} */ (await api(`${base}/replay`, { ...args, dryRun: true }));
    } catch (err) {
      await showError(err);
      return;
    }
    const from = path ?? plan.from?.path;
    const ok = await ctx.dialog(
      `Replay ${label}${from ? ` from ${from}` : ""}?`,
      h(ReplayPreview, { plan }),
      [{ label: "Replay now", value: true, class: "primary" }, { label: "Don't replay" }],
    );
    if (!ok) return;
    try {
      const res = /** @type {ReplayAnswer} */ (await api(`${base}/replay`, { ...args, dryRun: false }));
      ctx.toast("requested" in res ? res.message : `Replayed ${label}: it runs again.`);
      refresh();
    } catch (err) {
      await showError(err);
    }
  }

  async function cancel() {
    const ok = await ctx.dialog(
      `Cancel ${label}?`,
      h(
        "p",
        {},
        "A running step's signal fires, waits and timers are dropped, and the history is kept. A cancelled run can be replayed later.",
      ),
      [{ label: "Cancel the run", value: true, class: "danger" }, { label: "Keep it" }],
    );
    if (!ok) return;
    try {
      const res = /** @type {CancelAnswer} */ (await api(`${base}/cancel`, {}));
      ctx.toast(
        res.status === "requested"
          ? "Cancel requested from the process that runs it."
          : `The run is ${res.status}.`,
      );
      refresh();
    } catch (err) {
      ctx.toast(/** @type {Error} */ (err).message, true);
    }
  }

  const refresh = debounce(() => load().catch(ctx.fail), 120);
  const stop = follow({ workflow, key }, () => refresh());
  // Bars of a live run grow with the clock; a long history is redrawn less often.
  let ticks = 0;
  const ticker = setInterval(() => {
    ticks++;
    const run = state.run?.run;
    const n = state.history?.entries.length ?? 0;
    if (run && !isTerminal(run.status) && (n < BUSY_HISTORY || ticks % 5 === 0)) {
      state.now = now();
      draw();
    }
  }, 1000);
  load().catch(ctx.fail);
  return () => {
    stopped = true;
    stop();
    refresh.cancel();
    clearInterval(ticker);
    render(null, main);
  };
}
