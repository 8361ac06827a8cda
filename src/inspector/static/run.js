// One run: its status and what it waits on, the diagnosis of a failure, the step timeline, the chosen
// entry whole (input, output, error and stack, state before and after), and the actions: send a message
// (a form built from the queue's schema), replay (the dry run shown before confirming), cancel.
// Follows the run's events and re-reads it, so the page moves on as steps happen.

import { messageForm } from "./forms.js";
import {
  api,
  badge,
  clock,
  debounce,
  duration,
  fill,
  follow,
  h,
  jsonBlock,
  now,
  randomKey,
  relative,
  runPath,
  timeEl,
} from "./lib.js";
import { entryView, planView, renderDiagnosis } from "./panels.js";
import { renderTimeline } from "./timeline.js";

const TERMINAL = new Set(["completed", "failed", "cancelled"]);

/** The entry to show first: the innermost failed entry, else the one the run waits in, else none. */
function defaultEntry(entries, run) {
  const failed = entries.filter((e) => e.status === "failed" && e.scope !== "~replay");
  const inner = failed.filter((f) => !failed.some((g) => g !== f && g.scope.startsWith(f.path)));
  if (run.status === "failed" && inner.length) return inner.sort((a, b) => a.id - b.id)[0].id;
  const waiting = run.waiting?.[0]?.entry;
  return entries.find((e) => e.path === waiting)?.id ?? null;
}

/** Shows a run in `main`; returns a function that stops following it. */
export function showRun(main, workflow, key, params, ctx) {
  const base = runPath(workflow, key);
  const label = `${workflow}/${key}`;
  let data = null; // { run, waiting, queues, can }
  let entries = [];
  let selectedId = params.has("entry") ? Number(params.get("entry")) : null;
  let detail = null;
  let detailSig = "";
  let waitSig = null;
  let diagnosedStatus = null;
  const collapsed = new Set();

  const header = h("header", { class: "run-head" });
  const diagnosis = h("section", { class: "panel diagnosis", hidden: true, "aria-label": "Diagnosis" });
  const errorBox = h("section", { class: "panel run-error", hidden: true, "aria-label": "Error" });
  const waiting = h("section", {
    class: "panel waiting",
    hidden: true,
    "aria-label": "What the run waits on",
  });
  const timeline = h("div", { class: "timeline" });
  const truncatedNote = h("p", { class: "muted", hidden: true });
  const entryBox = h("section", { class: "panel entry", "aria-label": "Entry" });
  const values = h("section", { class: "panel values", "aria-label": "Input, state and output" });
  fill(
    main,
    h("p", { class: "crumbs" }, h("a", { href: "#/", text: "← All runs" })),
    header,
    diagnosis,
    errorBox,
    waiting,
    h(
      "div",
      { class: "run-body" },
      h(
        "section",
        { class: "panel timeline-panel", "aria-label": "Timeline" },
        h("h2", { text: "Timeline" }),
        truncatedNote,
        timeline,
      ),
      entryBox,
    ),
    values,
  );

  async function load() {
    const [r, hist] = await Promise.all([api(base), api(`${base}/history`)]);
    data = r;
    entries = hist.entries;
    truncatedNote.hidden = !hist.truncated;
    truncatedNote.textContent = hist.truncated
      ? `The first ${entries.length.toLocaleString("en")} entries are drawn; page through the rest with the MCP tool get_history.`
      : "";
    if (selectedId === null || !entries.some((e) => e.id === selectedId))
      selectedId = defaultEntry(entries, data.run);
    renderHead();
    renderError();
    renderWaiting();
    renderValues();
    drawTimeline();
    await loadDiagnosis();
    await loadEntry();
  }

  function renderHead() {
    const { run, can } = data;
    const took = run.finishedAt ? duration(run.finishedAt - run.createdAt) : null;
    fill(
      header,
      h(
        "div",
        { class: "run-title" },
        h(
          "h1",
          {},
          h("span", { class: "wf", text: run.workflow }),
          " / ",
          h("span", { class: "key", text: run.key }),
        ),
        h("span", { class: "run-status", "aria-label": `Status ${run.status}` }, badge(run.status)),
        h("span", { class: "muted", text: `v${run.version}` }),
        run.executing ? h("span", { class: "pill", text: "executing" }) : null,
      ),
      h(
        "p",
        { class: "run-meta" },
        "created ",
        timeEl(run.createdAt, true),
        run.finishedAt
          ? [" · finished ", timeEl(run.finishedAt), ` · took ${took}`]
          : [" · updated ", timeEl(run.updatedAt, true)],
      ),
      h(
        "div",
        { class: "actions" },
        can.replay && (run.status === "failed" || run.status === "cancelled")
          ? h("button", { type: "button", class: "primary", text: "Replay…", onclick: () => replay(null) })
          : null,
        can.cancel
          ? h("button", { type: "button", class: "danger", text: "Cancel run…", onclick: cancel })
          : null,
        ctx.meta.readOnly ? h("span", { class: "muted", text: "read-only: actions are off" }) : null,
      ),
    );
  }

  function renderError() {
    const err = data.run.error;
    errorBox.hidden = !err;
    if (!err) return;
    // A failed step's error names the step and what its code threw: that goes first.
    const cause = err.details?.cause?.message !== undefined ? err.details.cause : null;
    const step = typeof err.details?.step === "string" ? err.details.step : null;
    fill(
      errorBox,
      h("h2", { text: "Why it failed" }),
      cause
        ? h(
            "p",
            { class: "error-text big" },
            step ? [h("code", { text: step }), " threw "] : null,
            h("strong", { text: `${cause.name ?? "Error"}: ` }),
            String(cause.message),
          )
        : null,
      h(
        "p",
        { class: cause ? "muted" : "error-text big" },
        h("strong", { text: `${err.name}: ` }),
        err.message,
        err.code ? ` (${err.code})` : "",
      ),
      err.stack
        ? h("details", {}, h("summary", { text: "Stack" }), h("pre", { class: "stack", text: err.stack }))
        : null,
    );
  }

  async function loadDiagnosis() {
    if (data.run.status !== "failed") {
      diagnosis.hidden = true;
      diagnosedStatus = null;
      return;
    }
    if (diagnosedStatus === data.run.updatedAt) return;
    diagnosedStatus = data.run.updatedAt;
    diagnosis.hidden = false;
    fill(diagnosis, h("h2", { text: "Diagnosis" }), h("p", { class: "muted", text: "Diagnosing…" }));
    try {
      const res = await api(`${base}/diagnosis`);
      fill(
        diagnosis,
        h("h2", { text: "Diagnosis" }),
        renderDiagnosis(res.diagnosis, {
          select: (ref) => {
            const e = entries.find((x) => x.id === ref || x.path === ref);
            if (e) select(e.id);
          },
          replay: (fromStep) => replay(fromStep),
          canReplay: data.can.replay,
        }),
      );
    } catch (err) {
      fill(diagnosis, h("h2", { text: "Diagnosis" }), h("p", { class: "muted", text: err.message }));
    }
  }

  function renderWaiting() {
    const { run, waiting: waits, queues, can } = data;
    const sig = JSON.stringify([run.status, waits, can.send, queues.map((q) => q.name)]);
    if (sig === waitSig) {
      for (const el of waiting.querySelectorAll("[data-until]"))
        el.textContent = relative(Number(el.dataset.until));
      return;
    }
    waitSig = sig;
    const items = waits.map((w) => {
      const until = w.until
        ? h("span", { class: "rel", dataset: { until: String(w.until) }, text: relative(w.until) })
        : null;
      if (w.kind === "queue") {
        return h(
          "div",
          { class: "wait-item" },
          h("h3", {}, "Waiting for a message on ", h("code", { text: w.queue })),
          h(
            "p",
            { class: "muted" },
            `in ${w.entry}`,
            w.until ? [" · times out ", until, ` (${clock(w.until)})`] : " · no timeout",
          ),
          can.send && w.messageSchema !== undefined
            ? messageForm(w.queue, w.messageSchema, (body) => send(w.queue, body))
            : can.send
              ? h("p", {
                  class: "muted",
                  text: "No process has published this queue's schema, so there is no form.",
                })
              : null,
        );
      }
      if (w.kind === "sleep")
        return h(
          "div",
          { class: "wait-item" },
          h("h3", {}, "Sleeping in ", h("code", { text: w.entry })),
          h("p", {}, `until ${clock(w.until)} · `, until),
        );
      return h(
        "div",
        { class: "wait-item" },
        h("h3", {}, "Retrying ", h("code", { text: w.entry })),
        h("p", {}, `next attempt at ${clock(w.until)} · `, until),
      );
    });
    const otherQueues = queues.filter((q) => !waits.some((w) => w.queue === q.name));
    const extra =
      can.send && otherQueues.length
        ? h(
            "details",
            { class: "send-other" },
            h("summary", { text: waits.length ? "Send to another queue" : "Send a message" }),
            otherQueues.map((q) =>
              h(
                "div",
                { class: "wait-item" },
                h("h3", {}, h("code", { text: q.name })),
                messageForm(q.name, q.schema, (body) => send(q.name, body)),
              ),
            ),
          )
        : null;
    waiting.hidden = items.length === 0 && !extra;
    fill(waiting, items.length ? h("h2", { text: "Waiting on" }) : null, items, extra);
  }

  function renderValues() {
    const { run } = data;
    fill(
      values,
      h(
        "details",
        {},
        h("summary", { text: "Input, state and output" }),
        h(
          "div",
          { class: "three" },
          h("div", {}, h("h3", { text: "Input" }), jsonBlock(run.input, "Input")),
          h("div", {}, h("h3", { text: "State" }), jsonBlock(run.state, "State")),
          h("div", {}, h("h3", { text: "Output" }), jsonBlock(run.output, "Output")),
        ),
      ),
    );
  }

  function drawTimeline() {
    if (!data) return;
    if (entries.length === 0) {
      fill(timeline, h("p", { class: "muted", text: "No entries yet." }));
      return;
    }
    renderTimeline(timeline, {
      entries,
      run: data.run,
      now: now(),
      selectedId,
      collapsed,
      onSelect: (e) => select(e.id),
      onToggle: (e) => {
        if (collapsed.has(e.id)) collapsed.delete(e.id);
        else collapsed.add(e.id);
        drawTimeline();
      },
    });
  }

  function select(id) {
    selectedId = id;
    const q = new URLSearchParams({ entry: String(id) });
    history.replaceState(null, "", `#/run/${encodeURIComponent(workflow)}/${encodeURIComponent(key)}?${q}`);
    drawTimeline();
    loadEntry().catch(ctx.fail);
  }

  async function loadEntry() {
    const bar = entries.find((e) => e.id === selectedId);
    if (!bar) {
      detail = null;
      detailSig = "";
      fill(
        entryBox,
        h("h2", { text: "Entry" }),
        h("p", { class: "muted", text: "Choose an entry in the timeline to see it whole." }),
      );
      return;
    }
    const sig = JSON.stringify([bar.id, bar.status, bar.endedAt, bar.attempts.length]);
    if (sig !== detailSig || !detail) {
      detail = (await api(`${base}/entries/${bar.id}`)).entry;
      detailSig = sig;
    }
    fill(entryBox, entryView(detail, data.can.replay ? (e) => replay(e.id, e.path) : null));
  }

  async function send(queue, body) {
    const res = await api(`${base}/messages`, { queue, body, idempotencyKey: randomKey() });
    refresh();
    return res.duplicate ? "Already sent." : `Sent as message #${res.messageId}; the run picks it up now.`;
  }

  async function replay(fromStep, path) {
    const args = fromStep === null ? {} : { fromStep };
    let plan;
    try {
      plan = await api(`${base}/replay`, { ...args, dryRun: true });
    } catch (err) {
      await ctx.dialog(`Replay ${label}`, h("p", { class: "error-text", text: err.message }), [
        { label: "Close" },
      ]);
      return;
    }
    const ok = await ctx.dialog(
      `Replay ${label}${path ? ` from ${path}` : plan.from ? ` from ${plan.from.path}` : ""}?`,
      planView(plan),
      [{ label: "Replay now", value: true, class: "primary" }, { label: "Don't replay" }],
    );
    if (!ok) return;
    try {
      const res = await api(`${base}/replay`, { ...args, dryRun: false });
      ctx.toast(res.requested ? res.message : `Replayed ${label}: it runs again.`);
      refresh();
    } catch (err) {
      await ctx.dialog(`Replay ${label}`, h("p", { class: "error-text", text: err.message }), [
        { label: "Close" },
      ]);
    }
  }

  async function cancel() {
    const ok = await ctx.dialog(
      `Cancel ${label}?`,
      h("p", {
        text: "A running step's signal fires, waits and timers are dropped, and the history is kept. A cancelled run can be replayed later.",
      }),
      [{ label: "Cancel the run", value: true, class: "danger" }, { label: "Keep it" }],
    );
    if (!ok) return;
    try {
      const res = await api(`${base}/cancel`, {});
      ctx.toast(
        res.status === "requested"
          ? "Cancel requested from the process that runs it."
          : `The run is ${res.status}.`,
      );
      refresh();
    } catch (err) {
      ctx.toast(err.message, true);
    }
  }

  const refresh = debounce(() => load().catch(ctx.fail), 120);
  const stop = follow({ workflow, key }, () => refresh());
  // Bars of a live run grow with the clock; a long history is redrawn less often.
  let ticks = 0;
  const ticker = setInterval(() => {
    ticks++;
    if (data && !TERMINAL.has(data.run.status) && (entries.length < 500 || ticks % 5 === 0)) {
      drawTimeline();
      renderWaiting();
    }
  }, 1000);
  load().catch(ctx.fail);
  return () => {
    stop();
    refresh.cancel();
    clearInterval(ticker);
  };
}
