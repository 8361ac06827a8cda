// @ts-check
// The writes panel of a run's page: the audit of what was done to the run through MCP, the inspector and
// the CLI (newest first): when, what, by whom, and how it ended (refusals too).

import { h } from "preact";
import { Time } from "./parts.js";

/** @typedef {import("../../engine/audit-types.js").AuditEntry} AuditEntry */

/** Who made a write, in a few words. */
export function whoText(/** @type {AuditEntry} */ e) {
  const c = e.client;
  const parts = [
    c.name,
    c.version,
    c.user ? `user ${c.user}` : "",
    c.pid ? `pid ${c.pid}` : "",
    c.label ?? "",
  ];
  if (c.session) parts.push(`session ${c.session.slice(0, 16)}`);
  return [e.surface, ...parts.filter(Boolean)].join(" · ");
}

/** The panel; nothing when no write was recorded for the run. */
export function WritesPanel(
  /** @type {{ writes: { count: number, entries: AuditEntry[] } | undefined }} */ { writes },
) {
  if (!writes || writes.count === 0) return null;
  return h(
    "section",
    { class: "panel writes", "aria-label": "Writes" },
    h("h2", {}, `Writes (${writes.count})`),
    h(
      "table",
      { class: "writes-table" },
      h(
        "thead",
        null,
        h("tr", null, ...["When", "What", "By", "Outcome"].map((t) => h("th", { scope: "col" }, t))),
      ),
      h(
        "tbody",
        null,
        writes.entries.map((e) =>
          h(
            "tr",
            { key: e.id, "data-write": e.id, class: e.outcome.ok ? "" : "refused" },
            h("td", null, h(Time, { ms: Date.parse(e.at), rel: true })),
            h("td", { class: "write-action" }, e.action),
            h("td", { class: "write-by" }, whoText(e)),
            h(
              "td",
              { class: "write-outcome" },
              e.outcome.ok ? "ok" : `refused: ${e.outcome.code}`,
              e.outcome.ok ? null : h("span", { class: "muted" }, ` ${e.outcome.message.slice(0, 200)}`),
            ),
          ),
        ),
      ),
    ),
    writes.count > writes.entries.length
      ? h(
          "p",
          { class: "muted" },
          `The latest ${writes.entries.length} of ${writes.count}; the MCP tool list_audit pages through them all.`,
        )
      : null,
  );
}
