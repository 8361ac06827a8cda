// @ts-check
// "Replay all N" of a failure group: a dry run pins the group's runs in a plan and its preview is shown (how
// many, by signature, samples with what each replay discards and runs again, the refusals); only on confirm
// is that plan (its token) replayed, and the counts of what became of its runs are shown.

import { h } from "preact";
import { api } from "./api.js";
import { plural } from "./format.js";
import { Badge } from "./parts.js";

/** @typedef {import("./types.js").BulkPreviewAnswer} BulkPreview */
/** @typedef {import("./types.js").BulkResultAnswer} BulkResult */
/** @typedef {import("./failures-view.js").FailureGroup} FailureGroup */
/** @typedef {import("./app.js").AppContext} AppContext */

/** A bulk replay's dry run, shown before it is confirmed. */
export function BulkPreviewView(/** @type {{ preview: BulkPreview }} */ { preview: p }) {
  return h(
    "div",
    { class: "plan bulk-plan" },
    h(
      "p",
      { class: "bulk-count" },
      `Replays ${plural(p.eligible, "run", "runs")} of the ${p.matched} this dry run pinned; each retries its failed step on the latest version. Runs that fail this way later are not in the plan.`,
    ),
    h("h3", null, "By signature"),
    h(
      "ul",
      { class: "bulk-signatures" },
      p.bySignature.map((s) =>
        h(
          "li",
          { key: s.signature ?? "none" },
          h("code", null, s.workflow),
          ` ${s.pattern || "(no signature)"}: ${s.count} (${s.eligible} to replay)`,
        ),
      ),
    ),
    h("h3", null, `Samples (${p.samples.length})`),
    h(
      "ul",
      { class: "bulk-samples" },
      p.samples.map((s) =>
        h(
          "li",
          { key: s.run, "data-run": s.run },
          h("code", null, s.run),
          " ",
          h(Badge, { status: s.status }),
          s.refused
            ? ` refused: ${s.refused}`
            : s.replay
              ? [
                  s.replay.from ? [" from ", h("code", null, s.replay.from)] : " over its whole history",
                  `; discards ${plural(s.replay.discardCount, "entry", "entries")}`,
                  s.replay.discard.length ? [" (", s.replay.discard.join(", "), ")"] : "",
                  `; runs again: ${s.replay.rerun.length ? s.replay.rerun.join(", ") : "nothing"}`,
                  `; version ${s.replay.version.from} → ${s.replay.version.to}`,
                ]
              : null,
        ),
      ),
    ),
    h("h3", null, `Refused ${p.refusedCount}`),
    p.refused.length
      ? h(
          "ul",
          { class: "bulk-refused" },
          p.refused.map((r) => h("li", { key: r.run }, h("code", null, r.run), ` ${r.status}: ${r.reason}`)),
        )
      : h("p", { class: "muted" }, "None."),
  );
}

/** What the real call did. */
export function BulkResultView(/** @type {{ result: BulkResult }} */ { result: r }) {
  return h(
    "div",
    { class: "bulk-result" },
    h(
      "p",
      { class: "bulk-counts" },
      `Replayed ${r.counts.done}, stored for the worker ${r.counts.requested}, refused ${r.counts.refused}, skipped ${r.counts.skipped}.`,
    ),
    r.refusals.length
      ? h(
          "ul",
          { class: "bulk-refused" },
          r.refusals.map((x) => h("li", { key: x.run }, h("code", null, x.run), ` ${x.status}: ${x.reason}`)),
        )
      : null,
  );
}

/**
 * Dry run, preview, confirm, replay, result: the whole "Replay all N" of one failure group.
 * @param {FailureGroup} group
 * @param {AppContext} ctx
 * @param {() => void} refresh
 */
export async function replayAll(group, ctx, refresh) {
  const title = `Replay all ${group.count} of ${group.workflow} failing at ${group.entry}`;
  const fail = (/** @type {unknown} */ err) =>
    ctx.dialog(title, h("p", { class: "error-text" }, /** @type {Error} */ (err).message), [
      { label: "Close" },
    ]);
  /** @type {BulkPreview} */
  let preview;
  try {
    preview = await api("/bulk/replay", { signature: group.signature, workflow: group.workflow });
  } catch (err) {
    await fail(err);
    return;
  }
  const ok = await ctx.dialog(`${title}?`, h(BulkPreviewView, { preview }), [
    { label: `Replay ${preview.eligible} now`, value: true, class: "primary" },
    { label: "Don't replay" },
  ]);
  if (!ok) return;
  /** @type {BulkResult} */
  let result;
  try {
    result = await api("/bulk/replay", { plan: preview.token });
  } catch (err) {
    await fail(err);
    return;
  }
  refresh();
  await ctx.dialog(`Replayed plan of ${group.workflow}`, h(BulkResultView, { result }), [{ label: "Close" }]);
}
