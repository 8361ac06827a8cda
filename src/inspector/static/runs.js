// @ts-check
// The runs list's page: filters live in the address (#/?status=failed&workflow=...), so a view can be
// shared; loads a page of runs, the counts and the schedules from the API, draws RunsView (runs-view.js), and reloads
// when the server says something changed.

import { h, render } from "preact";
import { api, debounce, follow } from "./api.js";
import { replayAll } from "./bulk-replay.js";
import { FILTERS, RunsView, tagPairs } from "./runs-view.js";

/** @typedef {import("./types.js").RunsAnswer} RunsAnswer */
/** @typedef {import("./types.js").WorkflowsAnswer} WorkflowsAnswer */
/** @typedef {import("./runs-view.js").Filters} Filters */
/** @typedef {import("./app.js").AppContext} AppContext */

/** Runs on a page. */
const PAGE = 25;

/** The API query of a list: filters (times as milliseconds), a page's size and its cursor. */
export function runsQuery(/** @type {Filters} */ filters, /** @type {string} */ cursor) {
  const q = new URLSearchParams();
  for (const k of FILTERS) {
    if (!filters[k]) continue;
    if (k === "tags") for (const pair of tagPairs(filters[k])) q.append("tag", pair);
    else q.set(k, k === "after" || k === "before" ? String(Date.parse(filters[k])) : filters[k]);
  }
  q.set("limit", String(PAGE));
  if (cursor) q.set("cursor", cursor);
  return q;
}

/**
 * Shows the runs list in `main`; returns a function that stops its live updates.
 * @param {HTMLElement} main
 * @param {URLSearchParams} params
 * @param {AppContext} ctx
 */
export function showRuns(main, params, ctx) {
  const filters = /** @type {Filters} */ (Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? ""])));
  const cursors = [params.get("cursor") ?? ""]; // the cursor of each page shown so far
  /** @type {RunsAnswer | null} */
  let page = null;
  /** @type {WorkflowsAnswer | null} */
  let workflows = null;
  /** @type {import("./types.js").SchedulesAnswer["schedules"]} */
  let schedules = [];
  /** @type {import("./types.js").FailuresAnswer["failures"]} */
  let failures = [];
  let stopped = false;

  function draw() {
    if (stopped || !page || !workflows) return;
    render(
      h(RunsView, {
        filters,
        statuses: ctx.meta.statuses,
        page,
        workflows,
        schedules,
        failures,
        readOnly: ctx.meta.readOnly,
        onReplayAll: (group) => void replayAll(group, ctx, () => void load().catch(ctx.fail)),
        pageNumber: cursors.length,
        href: (next) => ctx.href("#/", next),
        onFilter: (next) => ctx.go("#/", next),
        onTurn: (dir) => void turn(dir),
      }),
      main,
    );
  }

  async function load() {
    const [list, wf, sc, fl] = await Promise.all([
      api(`/runs?${runsQuery(filters, cursors.at(-1) ?? "")}`),
      api("/workflows"),
      api("/schedules"),
      api("/failures"),
    ]);
    failures = /** @type {import("./types.js").FailuresAnswer} */ (fl).failures;
    page = /** @type {RunsAnswer} */ (list);
    workflows = /** @type {WorkflowsAnswer} */ (wf);
    schedules = /** @type {import("./types.js").SchedulesAnswer} */ (sc).schedules;
    draw();
  }

  async function turn(/** @type {1 | -1} */ dir) {
    if (dir > 0 && page?.nextCursor) cursors.push(page.nextCursor);
    else if (dir < 0 && cursors.length > 1) cursors.pop();
    await load().catch(ctx.fail);
    const first = main.querySelector(".runs-table a");
    if (first instanceof HTMLElement) first.focus();
  }

  load().catch(ctx.fail);
  const refresh = debounce(() => load().catch(ctx.fail), 300);
  const stop = follow(null, () => refresh());
  return () => {
    stopped = true;
    stop();
    refresh.cancel();
    render(null, main);
  };
}
