// @ts-check
// The run's concurrency limit: queued behind the runs holding its key's slots (linked), or holding a slot.

import { h } from "preact";
import { runHref } from "./api.js";

/** @typedef {import("../shapes.js").RunAnswer["concurrency"]} Concurrency */

/** Nothing without a limit, or when the run neither holds a slot nor waits for one. */
export function ConcurrencyPanel(/** @type {{ concurrency: Concurrency, workflow: string }} */ props) {
  const c = props.concurrency;
  if (!c || (!c.queued && !c.holding)) return null;
  const of = c.key === "" ? `workflow ${props.workflow}` : `${c.label} ${c.key}`;
  if (!c.queued) {
    return h(
      "section",
      { class: "panel concurrency", "aria-label": "Concurrency limit" },
      h("p", {}, `Holds one of the ${c.limit} slot${c.limit === 1 ? "" : "s"} of ${of}.`),
    );
  }
  return h(
    "section",
    { class: "panel concurrency", "aria-label": "Concurrency limit" },
    h("h2", {}, `Queued behind ${c.holderCount} run${c.holderCount === 1 ? "" : "s"} of ${of}`),
    h(
      "p",
      { class: "muted" },
      `At most ${c.limit} at once; it starts by itself when one of them ends or suspends`,
      c.ahead ? ` (${c.ahead} older queued ahead of it).` : ".",
    ),
    c.holders.length
      ? h(
          "ul",
          { class: "holders" },
          c.holders.map((r) =>
            h(
              "li",
              { key: `${r.workflow}/${r.key}` },
              h("a", { href: runHref(r.workflow, r.key), class: "holder-link" }, `${r.workflow}/${r.key}`),
              ` (${r.status})`,
            ),
          ),
        )
      : null,
  );
}
