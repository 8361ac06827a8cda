// @ts-check
// The schedules panel of the runs page: each schedule's workflow, when it fires, its next firing (or paused,
// or orphaned: removed from the code), and its latest firing with a link to the run it started.

import { h } from "preact";
import { runHref } from "./api.js";
import { Badge, Time } from "./parts.js";

/** @typedef {import("./types.js").SchedulesAnswer} SchedulesAnswer */
/** @typedef {SchedulesAnswer["schedules"][number]} Schedule */

/** When a schedule fires, in a few words. */
export function whenLine(/** @type {Schedule} */ s) {
  return typeof s.spec.cron === "string"
    ? `cron ${s.spec.cron} (${String(s.spec.timezone)})`
    : `every ${String(s.spec.every)}`;
}

/** The panel; nothing when the database has no schedules. */
export function SchedulesPanel(/** @type {{ schedules: Schedule[] }} */ { schedules }) {
  if (schedules.length === 0) return null;
  return h(
    "section",
    { class: "schedules", "aria-label": "Schedules" },
    h("h2", null, "Schedules"),
    h(
      "table",
      { class: "schedules-table" },
      h(
        "thead",
        null,
        h(
          "tr",
          null,
          ...["Schedule", "Workflow", "Fires", "Next", "Last run"].map((t) => h("th", { scope: "col" }, t)),
        ),
      ),
      h(
        "tbody",
        null,
        schedules.map((s) =>
          h(
            "tr",
            { key: s.name, "data-schedule": s.name },
            h("td", null, s.name),
            h("td", null, s.workflow),
            h("td", null, whenLine(s)),
            h(
              "td",
              { class: "schedule-next" },
              s.orphaned
                ? h("span", { class: "muted" }, "orphaned (not in the code)")
                : s.paused
                  ? h("span", { class: "badge st-paused" }, "paused")
                  : h(Time, { ms: s.nextDue === null ? null : Date.parse(s.nextDue), rel: true }),
            ),
            h("td", { class: "schedule-last" }, lastCell(s)),
          ),
        ),
      ),
    ),
  );
}

function lastCell(/** @type {Schedule} */ s) {
  if (!s.last) return h("span", { class: "muted" }, "never fired");
  if (s.last.outcome !== "started" || !s.lastRun)
    return h("span", null, `${s.last.outcome} (due ${new Date(s.last.due).toISOString()})`);
  return h(
    "span",
    null,
    h("a", { href: runHref(s.workflow, s.lastRun.key) }, s.lastRun.key),
    " ",
    h(Badge, { status: s.lastRun.status }),
  );
}
