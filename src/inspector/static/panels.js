// Panels of the run view: one entry whole, a replay's dry run, and a diagnosis.

import { stateDiff } from "./forms.js";
import { badge, clock, duration, h, jsonBlock, timeEl } from "./lib.js";

/** One entry whole: timing, attempts, error and stack, input, output, the state diff; `onReplay` or null. */
export function entryView(e, onReplay) {
  const attempts = e.attempts ?? [];
  const section = (title, ...content) =>
    h("div", { class: "entry-part" }, h("h3", { text: title }), ...content);
  return [
    h(
      "h2",
      { tabindex: "-1", class: "entry-title" },
      h("span", { class: "mono", text: e.path }),
      " ",
      badge(e.status),
      h("span", { class: "muted", text: ` ${e.kind} #${e.id}` }),
    ),
    h(
      "dl",
      { class: "facts" },
      h("dt", { text: "started" }),
      h("dd", {}, timeEl(e.startedAt)),
      h("dt", { text: "ended" }),
      h("dd", {}, timeEl(e.endedAt)),
      h("dt", { text: "took" }),
      h("dd", { text: duration(e.durationMs) }),
      attempts.length ? [h("dt", { text: "attempts" }), h("dd", { text: String(attempts.length) })] : null,
    ),
    onReplay && e.kind !== "replay"
      ? h(
          "div",
          { class: "actions" },
          h("button", {
            type: "button",
            text: "Replay from this entry…",
            onclick: () => onReplay(e),
          }),
        )
      : null,
    e.error
      ? section(
          "Error",
          h("p", { class: "error-text" }, h("strong", { text: `${e.error.name}: ` }), e.error.message),
          e.error.stack ? h("pre", { class: "stack", text: e.error.stack }) : null,
        )
      : null,
    attempts.length
      ? section(
          "Attempts",
          h(
            "table",
            { class: "attempts" },
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["#", "status", "started", "took", "error"].map((t) => h("th", { scope: "col", text: t })),
              ),
            ),
            h(
              "tbody",
              {},
              attempts.map((a) =>
                h(
                  "tr",
                  { class: `at-row-${a.status}` },
                  h("td", { text: String(a.n) }),
                  h("td", {}, badge(a.status)),
                  h("td", {}, timeEl(a.startedAt)),
                  h("td", { text: a.endedAt ? duration(a.endedAt - a.startedAt) : "–" }),
                  h(
                    "td",
                    { class: "error-cell" },
                    a.error
                      ? [
                          h("span", { class: "error-text", text: `${a.error.name}: ${a.error.message}` }),
                          a.error.stack
                            ? h(
                                "details",
                                {},
                                h("summary", { text: "stack" }),
                                h("pre", { class: "stack", text: a.error.stack }),
                              )
                            : null,
                        ]
                      : "",
                    a.retryAt ? h("small", { class: "muted", text: ` next try ${clock(a.retryAt)}` }) : null,
                  ),
                ),
              ),
            ),
          ),
        )
      : null,
    "input" in e && e.input !== null ? section("Input", jsonBlock(e.input, "Input")) : null,
    "output" in e && e.output !== null ? section("Output", jsonBlock(e.output, "Output")) : null,
    section("State before → after", stateDiff(e.stateBefore, e.stateAfter)),
    e.detail && Object.keys(e.detail).length ? section("Detail", jsonBlock(e.detail, "Detail")) : null,
  ];
}

/** What a replay would do, from its dry run. */
export function planView(plan) {
  return h(
    "div",
    { class: "plan" },
    h(
      "p",
      {},
      plan.from
        ? ["Starts again from ", h("code", { text: plan.from.path }), "."]
        : "Reruns the code over the whole history; nothing is discarded.",
      ` Runs on version ${plan.version.to}${plan.version.to !== plan.version.from ? ` (was ${plan.version.from})` : ""}.`,
    ),
    h("h3", { text: `Discards ${plan.discard.length} entr${plan.discard.length === 1 ? "y" : "ies"}` }),
    plan.discard.length
      ? h(
          "ul",
          { class: "discard" },
          plan.discard
            .slice(0, 50)
            .map((d) => h("li", {}, h("code", { text: d.path }), " ", badge(d.status))),
        )
      : h("p", { class: "muted", text: "None." }),
    plan.reopen.length
      ? h(
          "p",
          {},
          "Reopens ",
          plan.reopen.map((r) => h("code", { text: `${r.path} ` })),
        )
      : null,
    h("h3", {
      text: `Puts back ${plan.restoreMessages.length} message${plan.restoreMessages.length === 1 ? "" : "s"}`,
    }),
    plan.restoreMessages.length
      ? h(
          "ul",
          {},
          plan.restoreMessages.map((m) =>
            h("li", {}, h("code", { text: m.queue }), ` ${JSON.stringify(m.body)}`),
          ),
        )
      : null,
    h("details", {}, h("summary", { text: "State it resumes with" }), jsonBlock(plan.restoreState, "State")),
  );
}

/**
 * A diagnosis (see src/diagnosis/types.ts): category, summary, the culprit entry, evidence, similar failures
 * and next actions. Entries are links into the timeline; a replay_run dry run becomes the Replay button.
 */
export function renderDiagnosis(d, act) {
  if (!d || typeof d !== "object") return h("p", { text: String(d) });
  const entryButton = (ref, label) =>
    h("button", { type: "button", class: "link", text: label, onclick: () => act.select(ref) });
  const evidence = Array.isArray(d.evidence) ? d.evidence : [];
  const actions = (Array.isArray(d.nextActions) ? d.nextActions : []).filter(
    (a) =>
      !(
        a.kind === "call" &&
        (a.tool === "wait_for_run" || (a.tool === "replay_run" && a.args?.dryRun !== true))
      ),
  );
  return h(
    "div",
    { class: "diag" },
    h(
      "p",
      { class: "diag-head" },
      d.category ? h("span", { class: "pill", text: d.category }) : null,
      d.culprit ? [" at ", entryButton(d.culprit.id, d.culprit.path)] : null,
    ),
    d.summary ? h("p", { class: "diag-summary", text: d.summary }) : null,
    evidence.length
      ? h(
          "ul",
          { class: "evidence" },
          evidence
            .slice(0, 8)
            .map((e) =>
              h(
                "li",
                {},
                h("span", { class: "muted", text: `${e.kind}: ` }),
                e.fact,
                e.entry !== undefined
                  ? [" ", entryButton(e.entry, `#${e.entry}${e.attempt ? ` attempt ${e.attempt}` : ""}`)]
                  : null,
              ),
            ),
        )
      : null,
    d.similar && d.similar.count > 1
      ? h("p", {
          class: "muted",
          text: `${d.similar.count} runs failed this way since ${d.similar.firstSeen}${d.similar.keys?.length ? ` (e.g. ${d.similar.keys.join(", ")})` : ""}.`,
        })
      : null,
    actions.length
      ? h(
          "div",
          {},
          h("h3", { text: "Next" }),
          h(
            "ol",
            { class: "next-actions" },
            actions.map((a) => {
              if (a.kind === "person") return h("li", { text: a.change });
              if (a.tool === "replay_run")
                return h(
                  "li",
                  {},
                  h("button", {
                    type: "button",
                    text: "Preview the replay…",
                    disabled: !act.canReplay,
                    onclick: () => act.replay(a.args.fromStep ?? null),
                  }),
                  ` ${a.why}`,
                );
              if (a.tool === "get_step" && a.args?.step !== undefined)
                return h("li", {}, entryButton(a.args.step, `Show ${a.args.step}`), ` ${a.why}`);
              return h("li", {}, h("code", { text: `${a.tool} ${JSON.stringify(a.args)}` }), ` ${a.why}`);
            }),
          ),
        )
      : null,
    h(
      "details",
      {},
      h("summary", { text: "Whole diagnosis (as diagnose_run answers)" }),
      jsonBlock(d, "Diagnosis"),
    ),
  );
}
