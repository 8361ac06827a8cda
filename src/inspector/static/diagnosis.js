// @ts-check
// The diagnosis panel (diagnose_run's answer, see src/diagnosis/types.ts): category, the culprit entry,
// the evidence, similar failures and what to do next. Entries are links into the timeline; the
// replay_run dry run it suggests becomes the "Preview the replay" button.

import { h } from "preact";
import { JsonBlock } from "./parts.js";

/** @typedef {import("./types.js").Diagnosis} Diagnosis */
/** @typedef {import("./types.js").NextAction} NextAction */
/**
 * A diagnosis as the page has it: being worked out, there, or failed with a message.
 * @typedef {{ state: "loading" } | { state: "ready", diagnosis: Diagnosis } | { state: "error", message: string }} DiagnosisState
 */
/**
 * @typedef {object} DiagnosisProps
 * @property {DiagnosisState} diagnosis
 * @property {(ref: number | string) => void} onSelect shows an entry (by id or path)
 * @property {(fromStep: string | number | null) => void} onReplay previews a replay
 * @property {boolean} canReplay
 */

/** Evidence listed at most. */
const EVIDENCE = 8;

/**
 * The next actions worth a control on the page: a person's change, a replay preview, an entry to show,
 * another tool call written out. Waiting and the replay itself are the page's own buttons.
 * @param {Diagnosis} d
 */
export function pageActions(d) {
  return (Array.isArray(d.nextActions) ? d.nextActions : []).filter(
    (a) =>
      !(
        a.kind === "call" &&
        (a.tool === "wait_for_run" || (a.tool === "replay_run" && a.args?.dryRun !== true))
      ),
  );
}

/** The diagnosis of a failed run. */
export function DiagnosisPanel(/** @type {DiagnosisProps} */ props) {
  const { diagnosis } = props;
  return h(
    "section",
    { class: "panel diagnosis", "aria-label": "Diagnosis" },
    h("h2", {}, "Diagnosis"),
    diagnosis.state === "loading"
      ? h("p", { class: "muted" }, "Diagnosing…")
      : diagnosis.state === "error"
        ? h("p", { class: "muted" }, diagnosis.message)
        : h(DiagnosisBody, { ...props, d: diagnosis.diagnosis }),
  );
}

function DiagnosisBody(
  /** @type {DiagnosisProps & { d: Diagnosis }} */ { d, onSelect, onReplay, canReplay },
) {
  const entry = (/** @type {number | string} */ ref, /** @type {string} */ label) =>
    h("button", { type: "button", class: "link", onClick: () => onSelect(ref) }, label);
  const evidence = Array.isArray(d.evidence) ? d.evidence : [];
  const actions = pageActions(d);
  return h(
    "div",
    { class: "diag" },
    h(
      "p",
      { class: "diag-head" },
      d.category ? h("span", { class: "pill" }, d.category) : null,
      d.culprit ? [" at ", entry(d.culprit.id, d.culprit.path)] : null,
    ),
    d.summary ? h("p", { class: "diag-summary" }, d.summary) : null,
    evidence.length
      ? h(
          "ul",
          { class: "evidence" },
          evidence
            .slice(0, EVIDENCE)
            .map((e) =>
              h(
                "li",
                {},
                h("span", { class: "muted" }, `${e.kind}: `),
                e.fact,
                e.entry !== undefined
                  ? [" ", entry(e.entry, `#${e.entry}${e.attempt ? ` attempt ${e.attempt}` : ""}`)]
                  : null,
              ),
            ),
        )
      : null,
    d.similar && d.similar.count > 1
      ? h(
          "p",
          { class: "muted" },
          `${d.similar.count} runs failed this way since ${d.similar.firstSeen}${d.similar.keys?.length ? ` (e.g. ${d.similar.keys.join(", ")})` : ""}.`,
        )
      : null,
    actions.length
      ? h(
          "div",
          {},
          h("h3", {}, "Next"),
          h(
            "ol",
            { class: "next-actions" },
            actions.map((a) => h(NextStep, { action: a, entry, onReplay, canReplay })),
          ),
        )
      : null,
    h(
      "details",
      {},
      h("summary", {}, "Whole diagnosis (as diagnose_run answers)"),
      h(JsonBlock, { value: d, label: "Diagnosis" }),
    ),
  );
}

/**
 * One next action as a list item.
 * @param {{ action: NextAction, entry: (ref: number | string, label: string) => import("preact").VNode,
 *   onReplay: DiagnosisProps["onReplay"], canReplay: boolean }} props
 */
function NextStep({ action: a, entry, onReplay, canReplay }) {
  if (a.kind === "person") return h("li", {}, a.change);
  if (a.tool === "replay_run") {
    const from = a.args.fromStep;
    return h(
      "li",
      {},
      h(
        "button",
        {
          type: "button",
          disabled: !canReplay,
          onClick: () => onReplay(typeof from === "string" || typeof from === "number" ? from : null),
        },
        "Preview the replay…",
      ),
      ` ${a.why}`,
    );
  }
  const step = a.args?.step;
  if (a.tool === "get_step" && (typeof step === "string" || typeof step === "number"))
    return h("li", {}, entry(step, `Show ${step}`), ` ${a.why}`);
  return h("li", {}, h("code", {}, `${a.tool} ${JSON.stringify(a.args)}`), ` ${a.why}`);
}
