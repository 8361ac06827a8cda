// The runs list: counts by status, filters (workflow, status, key, time, error text), newest first,
// a page at a time. Filters live in the address (#/?status=failed&workflow=...), so a view can be shared.

import { api, badge, clock, debounce, duration, fill, follow, h, relative, timeEl } from "./lib.js";

const PAGE = 25;
const FILTERS = ["workflow", "status", "key", "error", "after", "before"];

/** A link to a run's view. */
export function runHref(workflow, key) {
  return `#/run/${encodeURIComponent(workflow)}/${encodeURIComponent(key)}`;
}

function waitLine(run) {
  const w = run.waiting?.[0];
  if (!w) return null;
  if (w.kind === "queue")
    return `waits for a message on ${w.queue}${w.until ? `, times out ${relative(w.until)}` : ""}`;
  if (w.kind === "sleep") return `sleeps in ${w.entry} until ${clock(w.until)}`;
  return `retries ${w.entry} ${relative(w.until)}`;
}

/** Shows the runs list in `main`; returns a function that stops its live updates. */
export function showRuns(main, params, ctx) {
  const filters = Object.fromEntries(FILTERS.map((k) => [k, params.get(k) ?? ""]));
  const cursors = [params.get("cursor") ?? ""]; // the cursor of each page shown so far
  let page = null;

  const counts = h("nav", { class: "counts", "aria-label": "Runs by status" });
  const table = h("div", { class: "runs-table" });
  const pager = h("div", { class: "pager" });
  const form = filterForm(filters, ctx, (next) => ctx.go("#/", next));
  fill(
    main,
    h("h1", { class: "page-title", text: "Runs" }),
    counts,
    form,
    h(
      "section",
      { "aria-label": "Runs", "aria-live": "polite", "aria-busy": "false", class: "runs" },
      table,
      pager,
    ),
  );

  async function load() {
    const q = new URLSearchParams();
    for (const k of FILTERS)
      if (filters[k]) q.set(k, k === "after" || k === "before" ? String(Date.parse(filters[k])) : filters[k]);
    q.set("limit", String(PAGE));
    const cursor = cursors.at(-1);
    if (cursor) q.set("cursor", cursor);
    const [list, wf] = await Promise.all([api(`/runs?${q}`), api("/workflows")]);
    page = list;
    renderCounts(wf);
    renderTable();
  }

  function renderCounts(wf) {
    const source = filters.workflow
      ? (wf.workflows.find((w) => w.name === filters.workflow)?.runs ?? {})
      : wf.totals;
    const total = Object.values(source).reduce((a, b) => a + b, 0);
    const chosen = new Set(filters.status.split(",").filter(Boolean));
    const chip = (status, n) => {
      const active = status === "" ? chosen.size === 0 : chosen.has(status);
      const next = { ...filters, status };
      return h(
        "a",
        {
          class: `count${active ? " active" : ""}${n === 0 ? " zero" : ""} ${status ? `st-chip-${status}` : ""}`,
          href: ctx.href("#/", next),
          "aria-current": active ? "true" : false,
          dataset: { status: status || "all" },
        },
        h("span", { class: "count-n", text: String(n) }),
        h("span", { class: "count-label", text: status || "all" }),
      );
    };
    fill(
      counts,
      chip("", total),
      ctx.meta.statuses.map((s) => chip(s, source[s] ?? 0)),
    );
    const select = form.querySelector("select[name=workflow]");
    const have = new Set([...select.options].map((o) => o.value));
    for (const w of wf.workflows) {
      if (!have.has(w.name))
        select.append(h("option", { value: w.name, text: w.name, selected: w.name === filters.workflow }));
    }
  }

  function renderTable() {
    if (page.runs.length === 0) {
      fill(table, h("p", { class: "empty", text: "No runs match these filters." }));
    } else {
      fill(
        table,
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
                h("th", { scope: "col", text: t }),
              ),
            ),
          ),
          h(
            "tbody",
            {},
            page.runs.map((r) =>
              h(
                "tr",
                { dataset: { workflow: r.workflow, key: r.key, status: r.status } },
                h("td", {}, badge(r.status)),
                h(
                  "td",
                  { class: "run-cell" },
                  h(
                    "a",
                    { href: runHref(r.workflow, r.key), class: "run-link" },
                    h("span", { class: "wf", text: r.workflow }),
                    " / ",
                    h("strong", { text: r.key }),
                  ),
                ),
                h("td", { text: `v${r.version}` }),
                h(
                  "td",
                  {},
                  timeEl(r.createdAt),
                  h("small", { class: "muted", text: ` ${relative(r.createdAt)}` }),
                ),
                h(
                  "td",
                  {},
                  r.finishedAt
                    ? duration(r.finishedAt - r.createdAt)
                    : h("small", { class: "muted", text: `updated ${relative(r.updatedAt)}` }),
                ),
                h(
                  "td",
                  { class: "note-cell" },
                  r.error
                    ? h("span", {
                        class: "error-text",
                        title: `${r.error.name}: ${r.error.message}`,
                        text: r.error.cause
                          ? `${r.error.step ? `${r.error.step}: ` : ""}${r.error.cause}`
                          : `${r.error.name}: ${r.error.message}`,
                      })
                    : h("span", { class: "muted", text: waitLine(r) ?? "" }),
                ),
              ),
            ),
          ),
        ),
      );
    }
    const n = cursors.length;
    fill(
      pager,
      h("button", { type: "button", disabled: n <= 1, text: "← Newer", onclick: () => turn(-1) }),
      h("span", { class: "muted", text: `Page ${n}` }),
      h("button", { type: "button", disabled: !page.nextCursor, text: "Older →", onclick: () => turn(1) }),
    );
  }

  async function turn(dir) {
    if (dir > 0 && page.nextCursor) cursors.push(page.nextCursor);
    else if (dir < 0 && cursors.length > 1) cursors.pop();
    await load().catch(ctx.fail);
    table.querySelector("a")?.focus();
  }

  load().catch(ctx.fail);
  const refresh = debounce(() => load().catch(ctx.fail), 300);
  const stop = follow(null, () => refresh());
  return () => {
    stop();
    refresh.cancel();
  };
}

function filterForm(filters, ctx, apply) {
  const input = (name, label, attrs = {}) =>
    h(
      "label",
      { class: "filter" },
      h("span", { text: label }),
      h("input", { name, value: filters[name], autocomplete: "off", ...attrs }),
    );
  const statusSelect = h(
    "select",
    { name: "status" },
    h("option", { value: "", text: "any" }),
    ctx.meta.statuses.map((s) => h("option", { value: s, text: s, selected: filters.status === s })),
  );
  if (filters.status.includes(","))
    statusSelect.append(h("option", { value: filters.status, text: filters.status, selected: true }));
  const form = h(
    "form",
    { class: "filters", role: "search", "aria-label": "Filter runs" },
    h(
      "label",
      { class: "filter" },
      h("span", { text: "Workflow" }),
      h("select", { name: "workflow" }, h("option", { value: "", text: "all" })),
    ),
    h("label", { class: "filter" }, h("span", { text: "Status" }), statusSelect),
    input("key", "Key contains", { type: "search", placeholder: "e.g. expense" }),
    input("error", "Error text", { type: "search", placeholder: "e.g. 503" }),
    input("after", "Created after", { type: "datetime-local" }),
    input("before", "Created before", { type: "datetime-local" }),
    h(
      "div",
      { class: "filter-buttons" },
      h("button", { type: "submit", class: "primary", text: "Filter" }),
      h("a", { class: "button", href: "#/", text: "Clear" }),
    ),
  );
  form.querySelector("select[name=workflow]").value = filters.workflow;
  if (filters.workflow && !form.querySelector("select[name=workflow]").value) {
    form
      .querySelector("select[name=workflow]")
      .append(h("option", { value: filters.workflow, text: filters.workflow, selected: true }));
  }
  form.addEventListener("submit", (ev) => {
    ev.preventDefault();
    const data = new FormData(form);
    apply(Object.fromEntries(FILTERS.map((k) => [k, String(data.get(k) ?? "")])));
  });
  // Choosing from a list applies at once; text waits for Enter.
  for (const s of form.querySelectorAll("select")) s.addEventListener("change", () => form.requestSubmit());
  return form;
}
