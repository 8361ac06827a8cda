// @ts-check
// A replay's dry run, shown before it is confirmed: where it starts again, what it discards and reopens,
// the steps that run again (their side effects repeat), the messages it puts back and the state it resumes with.

import { h } from "preact";
import { plural } from "./format.js";
import { Badge, JsonBlock } from "./parts.js";

/** @typedef {import("./types.js").ReplayPlan} ReplayPlan */

/** Most discarded entries listed by name. */
const LISTED = 50;

/** What a replay would do, from its dry run. */
export function ReplayPreview(/** @type {{ plan: ReplayPlan }} */ { plan }) {
  const { from, version, discard, reopen, restoreMessages } = plan;
  const rerun = plan.rerun ?? [];
  return h(
    "div",
    { class: "plan" },
    h(
      "p",
      {},
      from
        ? ["Starts again from ", h("code", {}, from.path), "."]
        : "Reruns the code over the whole history; nothing is discarded.",
      ` Runs on version ${version.to}${version.to !== version.from ? ` (was ${version.from})` : ""}.`,
    ),
    h("h3", {}, `Discards ${plural(discard.length, "entry", "entries")}`),
    discard.length
      ? h(
          "ul",
          { class: "discard" },
          discard
            .slice(0, LISTED)
            .map((d) => h("li", { key: d.id }, h("code", {}, d.path), " ", h(Badge, { status: d.status }))),
        )
      : h("p", { class: "muted" }, "None."),
    (plan.children ?? []).length
      ? [
          h("h3", {}, "Child runs"),
          h(
            "ul",
            { class: "children" },
            (plan.children ?? []).map((c) =>
              h(
                "li",
                { key: c.entry.id },
                h("code", {}, `${c.workflow}/${c.key}`),
                " ",
                h(Badge, { status: c.status }),
                c.action === "reuse"
                  ? " reused: its output is taken again, its side effects do not repeat"
                  : c.action === "replay"
                    ? " replayed from its failed step first"
                    : " waited for again",
              ),
            ),
          ),
        ]
      : null,
    h("h3", {}, `Runs ${plural(rerun.length, "step", "steps")} again`),
    rerun.length
      ? h(
          "ul",
          { class: "rerun" },
          rerun
            .slice(0, LISTED)
            .map((r) =>
              h(
                "li",
                { key: r.id },
                h("code", {}, r.path),
                r.status === "completed"
                  ? " completed before: what it does (a charge, an email) happens again"
                  : ` ${r.status} before (${plural(r.attempts, "attempt", "attempts")})`,
              ),
            ),
        )
      : h("p", { class: "muted" }, "None: no step's side effect repeats."),
    reopen.length
      ? h(
          "p",
          {},
          "Reopens ",
          reopen.map((r) => h("code", { key: r.id }, `${r.path} `)),
        )
      : null,
    h("h3", {}, `Puts back ${plural(restoreMessages.length, "message", "messages")}`),
    restoreMessages.length
      ? h(
          "ul",
          {},
          restoreMessages.map((m) =>
            h("li", { key: m.id }, h("code", {}, m.queue), ` ${JSON.stringify(m.body)}`),
          ),
        )
      : null,
    h(
      "details",
      {},
      h("summary", {}, "State it resumes with"),
      h(JsonBlock, { value: plan.restoreState, label: "State" }),
    ),
  );
}
