// @ts-check
// The runs list, from data given to it: counts by status (links that filter), the filters (workflow,
// status, key, error text, tags, time), the page of runs newest first (each with its tags, links that filter
// by them), and the pager.

import { h } from "preact";
import { runHref } from "./api.js";
import { FailuresPanel } from "./failures-view.js";
import { clock, duration, relative } from "./format.js";
import { Badge, Time } from "./parts.js";
import { SchedulesPanel } from "./schedules-view.js";

/** @typedef {import("./types.js").RunRow} RunRow */
/** @typedef {import("./types.js").RunsAnswer} RunsAnswer */
/** @typedef {import("./types.js").WorkflowsAnswer} WorkflowsAnswer */
/** @typedef {Record<Filter, string>} Filters */
/** @typedef {"workflow" | "status" | "key" | "error" | "tags" | "after" | "before"} Filter */
/**
 * @typedef {object} RunsViewProps
 * @property {Filters} filters as the address has them
 * @property {readonly string[]} statuses every run status, in order
 * @property {RunsAnswer} page
 * @property {WorkflowsAnswer} workflows
 * @property {import("./types.js").SchedulesAnswer["schedules"]} schedules every schedule (a panel when there are any)
 * @property {import("./failures-view.js").FailureGroup[]} failures failing runs by signature (a panel when there are any)
 * @property {boolean} readOnly the server refuses writes: no "Replay all" buttons
 * @property {(group: import("./failures-view.js").FailureGroup) => void} onReplayAll
 * @property {number} pageNumber from 1
 * @property {(filters: Filters) => string} href the link of the list with other filters
 * @property {(filters: Filters) => void} onFilter
 * @property {(direction: 1 | -1) => void} onTurn older (1) or newer (-1)
 */

/** The filters, in the order the form shows them. */
export const FILTERS = /** @type {const} */ ([
  "workflow",
  "status",
  "key",
  "error",
  "tags",
  "after",
  "before",
]);

/**
 * The tags filter's text ("customer=c-9, region=eu") as name=value pairs, blanks dropped. A comma starts a
 * new pair only where a tag name and "=" follow it, so a value may hold commas ("note=a,b, region=eu").
 */
export function tagPairs(/** @type {string} */ text) {
  return text
    .split(/,(?=\s*[A-Za-z0-9_.:/-]{1,64}=)/)
    .map((p) => p.trim())
    .filter(Boolean);
}

/** What a run waits on, in a few words. */
export function waitLine(/** @type {Pick<RunRow, "waiting">} */ run) {
  const w = run.waiting?.[0];
  if (!w) return null;
  if (w.kind === "queue")
    return `waits for a message on ${w.queue}${w.until ? `, times out ${relative(w.until)}` : ""}`;
  if (w.kind === "sleep") return `sleeps in ${w.entry} until ${clock(w.until)}`;
  return `retries ${w.entry} ${relative(w.until)}`;
}

/** The runs list. */
export function RunsView(/** @type {RunsViewProps} */ props) {
  return [
    h("h1", { class: "page-title", key: "title" }, "Runs"),
    h(Counts, { ...props, key: "counts" }),
    h(FailuresPanel, {
      failures: props.failures,
      readOnly: props.readOnly,
      onReplayAll: props.onReplayAll,
      key: "failures",
    }),
    h(SchedulesPanel, { schedules: props.schedules, key: "schedules" }),
    h(FilterForm, { ...props, key: "filters" }),
    h(
      "section",
      { "aria-label": "Runs", "aria-live": "polite", "aria-busy": "false", class: "runs", key: "runs" },
      h(RunsTable, {
        runs: props.page.runs,
        tagHref: (/** @type {string} */ pair) => props.href({ ...props.filters, tags: pair }),
      }),
      h(Pager, props),
    ),
  ];
}

/** Counts by status: the totals, or one workflow's; each a link to the list filtered by it. */
function Counts(/** @type {RunsViewProps} */ { filters, statuses, workflows, href }) {
  const source = filters.workflow
    ? (workflows.workflows.find((w) => w.name === filters.workflow)?.runs ?? {})
    : workflows.totals;
  const total = Object.values(source).reduce((a, b) => a + b, 0);
  const chosen = new Set(filters.status.split(",").filter(Boolean));
  const chip = (/** @type {string} */ status, /** @type {number} */ n) => {
    const active = status === "" ? chosen.size === 0 : chosen.has(status);
    return h(
      "a",
      {
        key: status,
        class: `count${active ? " active" : ""}${n === 0 ? " zero" : ""} ${status ? `st-chip-${status}` : ""}`,
        href: href({ ...filters, status }),
        "aria-current": active ? "true" : undefined,
        "data-status": status || "all",
      },
      h("span", { class: "count-n" }, String(n)),
      h("span", { class: "count-label" }, status || "all"),
    );
  };
  return h(
    "nav",
    { class: "counts", "aria-label": "Runs by status" },
    chip("", total),
    statuses.map((s) => chip(s, source[s] ?? 0)),
  );
}

/** The filters. Choosing from a list applies at once; text waits for Enter. */
function FilterForm(/** @type {RunsViewProps} */ { filters, statuses, workflows, onFilter }) {
  const names = workflows.workflows.map((w) => w.name);
  if (filters.workflow && !names.includes(filters.workflow)) names.push(filters.workflow);
  const statusChoices = [...statuses];
  if (filters.status.includes(",")) statusChoices.push(filters.status);
  const input = (/** @type {Filter} */ name, /** @type {string} */ label, /** @type {object} */ attrs = {}) =>
    h(
      "label",
      { class: "filter" },
      h("span", {}, label),
      h("input", { name, defaultValue: filters[name], autocomplete: "off", ...attrs }),
    );
  /** A list whose choice applies at once; `none` names its empty choice. */
  const choice = (
    /** @type {Filter} */ name,
    /** @type {string} */ label,
    /** @type {string} */ none,
    /** @type {string[]} */ options,
  ) =>
    h(
      "label",
      { class: "filter" },
      h("span", {}, label),
      h(
        "select",
        { name, value: filters[name], onChange: applyNow },
        h("option", { value: "" }, none),
        options.map((o) => h("option", { value: o, key: o }, o)),
      ),
    );
  const apply = (/** @type {HTMLFormElement} */ form) => {
    const data = new FormData(form);
    onFilter(/** @type {Filters} */ (Object.fromEntries(FILTERS.map((k) => [k, String(data.get(k) ?? "")]))));
  };
  const applyNow = (/** @type {Event} */ ev) => {
    const form = /** @type {HTMLSelectElement} */ (ev.currentTarget).form;
    if (form) apply(form);
  };
  return h(
    "form",
    {
      class: "filters",
      role: "search",
      "aria-label": "Filter runs",
      onSubmit: (/** @type {SubmitEvent} */ ev) => {
        ev.preventDefault();
        apply(/** @type {HTMLFormElement} */ (ev.currentTarget));
      },
    },
    choice("workflow", "Workflow", "all", names),
    choice("status", "Status", "any", statusChoices),
    input("key", "Key contains", { type: "search", placeholder: "e.g. expense" }),
    input("error", "Error text", { type: "search", placeholder: "e.g. 503" }),
    input("tags", "Tags", { type: "search", placeholder: "customer=c-9, region=eu" }),
    input("after", "Created after", { type: "datetime-local" }),
    input("before", "Created before", { type: "datetime-local" }),
    h(
      "div",
      { class: "filter-buttons" },
      h("button", { type: "submit", class: "primary" }, "Filter"),
      h("a", { class: "button", href: "#/" }, "Clear"),
    ),
  );
}

/** The page of runs, or a line saying none matches. */
function RunsTable(/** @type {{ runs: RunRow[], tagHref: (pair: string) => string }} */ { runs, tagHref }) {
  if (runs.length === 0)
    return h("div", { class: "runs-table" }, h("p", { class: "empty" }, "No runs match these filters."));
  return h(
    "div",
    { class: "runs-table" },
    h(
      "table",
      { class: "runs-list" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["Status", "Run", "Version", "Created", "Took / updated", "Error or wait"].map((t) =>
            h("th", { scope: "col", key: t }, t),
          ),
        ),
      ),
      h(
        "tbody",
        {},
        runs.map((r) => h(RunLine, { run: r, tagHref, key: r.id })),
      ),
    ),
  );
}

function RunLine(/** @type {{ run: RunRow, tagHref: (pair: string) => string }} */ { run: r, tagHref }) {
  return h(
    "tr",
    { "data-workflow": r.workflow, "data-key": r.key, "data-status": r.status },
    h("td", {}, h(Badge, { status: r.status })),
    h(
      "td",
      { class: "run-cell" },
      h(
        "a",
        { href: runHref(r.workflow, r.key), class: "run-link" },
        h("span", { class: "wf" }, r.workflow),
        " / ",
        h("strong", {}, r.key),
      ),
      h(Tags, { tags: r.tags, href: tagHref }),
    ),
    h("td", {}, `v${r.version}`),
    h("td", {}, h(Time, { ms: r.createdAt }), h("small", { class: "muted" }, ` ${relative(r.createdAt)}`)),
    h(
      "td",
      {},
      r.finishedAt
        ? duration(r.finishedAt - r.createdAt)
        : h("small", { class: "muted" }, `updated ${relative(r.updatedAt)}`),
    ),
    h(
      "td",
      { class: "note-cell" },
      r.error
        ? h(
            "span",
            { class: "error-text", title: `${r.error.name}: ${r.error.message}` },
            r.error.cause
              ? `${r.error.step ? `${r.error.step}: ` : ""}${r.error.cause}`
              : `${r.error.name}: ${r.error.message}`,
          )
        : h("span", { class: "muted" }, waitLine(r) ?? ""),
    ),
  );
}

/** A run's tags as chips; with `href`, each links to the list filtered by it. */
export function Tags(
  /** @type {{ tags: Record<string, string>, href?: (pair: string) => string }} */ { tags, href },
) {
  const pairs = Object.entries(tags ?? {});
  if (pairs.length === 0) return null;
  return h(
    "span",
    { class: "tags", "aria-label": "Tags" },
    pairs.map(([n, v]) =>
      href
        ? h("a", { class: "tag", href: href(`${n}=${v}`), key: n, "data-tag": n }, `${n}=${v}`)
        : h("span", { class: "tag", key: n, "data-tag": n }, `${n}=${v}`),
    ),
  );
}

function Pager(/** @type {RunsViewProps} */ { page, pageNumber, onTurn }) {
  return h(
    "div",
    { class: "pager" },
    h("button", { type: "button", disabled: pageNumber <= 1, onClick: () => onTurn(-1) }, "← Newer"),
    h("span", { class: "muted" }, `Page ${pageNumber}`),
    h("button", { type: "button", disabled: !page.nextCursor, onClick: () => onTurn(1) }, "Older →"),
  );
}
